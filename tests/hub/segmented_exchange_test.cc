// Gradients travel in segments, last layer first (proto/wire.h), and the hub
// averages and answers each segment as soon as every participant has sent
// it: a worker gets the result of its upper layers while its lower layers
// would still be computing. Two scripted workers drive an in-process hub
// and hold back their last segment until the first one's result is in.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "core/model/model_spec.h"
#include "tests/hub/fake_workers.h"

namespace mt {
namespace {

using test_support::InProcessHub;
using test_support::kWait;

TEST(GradientSegments, TileTheVectorLastLayerFirstAndRoundTrip) {
  // Layers beginning at 0, 100, 5'000 and 200'000 of 400'000 floats: the
  // two small bottom ones travel together.
  const std::vector<wire::Segment> s = wire::GradientSegments({0, 100, 5000, 200000}, 400000);
  std::vector<uint64_t> begins;
  size_t end = 400000;
  for (const auto& seg : s) {
    EXPECT_EQ(seg.end, end);
    EXPECT_GT(seg.size(), 0u);
    end = seg.begin;
    begins.push_back(seg.begin);
  }
  EXPECT_EQ(end, 0u);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].begin, 200000u);
  EXPECT_EQ(s[1].begin, 5000u);
  EXPECT_EQ(s[2].begin, 0u);
  const std::vector<wire::Segment> back = wire::SegmentsFromBegins(begins, 400000);
  ASSERT_EQ(back.size(), s.size());
  for (size_t k = 0; k < s.size(); ++k) EXPECT_EQ(back[k].begin, s[k].begin);

  // A layer larger than a chunk is split from the top down.
  const std::vector<wire::Segment> big = wire::GradientSegments({0}, 600000);
  ASSERT_EQ(big.size(), 3u);
  EXPECT_EQ(big[0].begin, 600000 - wire::kChunkFloats);
  EXPECT_EQ(big[1].begin, 600000 - 2 * wire::kChunkFloats);
  EXPECT_EQ(big[2].begin, 0u);

  // What a hub could send that does not tile the vector is refused.
  EXPECT_TRUE(wire::SegmentsFromBegins({}, 10).empty());
  EXPECT_TRUE(wire::SegmentsFromBegins({5}, 10).empty());                      // does not reach 0
  EXPECT_TRUE(wire::SegmentsFromBegins({0, 5}, 10).empty());                   // ascending
  EXPECT_TRUE(wire::SegmentsFromBegins({12, 0}, 10).empty());                  // beyond the end
  EXPECT_TRUE(wire::SegmentsFromBegins({0}, wire::kChunkFloats + 1).empty());  // too long
  EXPECT_EQ(wire::SegmentsFromBegins({0}, 10).size(), 1u);
  EXPECT_EQ(wire::GradientSegments({0}, 0).size(), 1u);  // a model without parameters
}

// Two dense layers of ~16.5k parameters each: two segments.
proto::ModelSpec TwoSegmentSpec() {
  return ParseModelSpec(R"(name: "two" input { channels: 1 height: 1 width: 128 }
                           layer { name: "flat" flatten {} }
                           layer { name: "fc1" dense { units: 128 } }
                           layer { name: "fc2" dense { units: 130 } })",
                        "test");
}

// A worker the test moves by hand: it sends what the test says and lets the
// test wait for what the hub sends back.
class ScriptedWorker final : public WorkerLink {
 public:
  ScriptedWorker(StepCoordinator& hub, const std::string& name) : hub_(hub) {
    proto::JoinRequest join;
    join.set_protocol_version(wire::kProtocolVersion);
    join.mutable_device()->set_name(name);
    proto::JoinReply reply;
    EXPECT_TRUE(hub_.Join(join, "test", &reply).ok());
    segments = wire::SegmentsFromBegins({reply.segments().begin(), reply.segments().end()},
                                        reply.param_count());
    proto::Hello hello;
    hello.set_worker_id(reply.worker_id());
    hello.set_session_secret(reply.session_secret());
    EXPECT_TRUE(hub_.Hello(hello, this, &id).ok());
  }
  ~ScriptedWorker() override { hub_.StreamClosed(id, HubStatus::Ok()); }

  bool Send(Encoded m) override {
    std::lock_guard<std::mutex> lock(mu_);
    inbox_.push_back(static_cast<const test_support::FakeEncoded&>(*m).message);
    cv_.notify_all();
    return true;
  }

  // The next message from the hub that `want` accepts (others are skipped);
  // fails the test after kWait.
  template <class Want>
  proto::HubMessage Await(Want want) {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      if (!cv_.wait_for(lock, kWait, [&] { return !inbox_.empty(); })) {
        ADD_FAILURE() << "nothing from the hub for " << kWait.count() << " s";
        return {};
      }
      proto::HubMessage m = std::move(inbox_.front());
      inbox_.pop_front();
      if (want(m)) return m;
    }
  }
  // This worker's assignment in the next plan.
  proto::Assignment AwaitAssignment() {
    const proto::HubMessage m = Await([](const proto::HubMessage& m) {
      return m.has_plan() || (m.has_result() && m.result().last());
    });
    const proto::StepPlan& plan = m.has_plan() ? m.plan() : m.result().plan();
    for (const auto& a : plan.assignments())
      if (a.worker_id() == id) return a;
    ADD_FAILURE() << "no assignment for worker " << id;
    return {};
  }
  // Segment k of a gradient whose values are all `value`.
  void SendSegment(const proto::Assignment& a, size_t k, float value) {
    proto::GradientChunk c;
    c.set_step(a.step());
    c.set_offset(segments[k].begin);
    for (size_t i = 0; i < segments[k].size(); ++i) c.add_values(value);
    if (k + 1 == segments.size()) {
      c.set_last(true);
      c.set_batch(a.batch());
      c.set_loss_sum(a.batch());
      c.set_compute_ms(1);
    }
    const HubStatus s = hub_.Gradient(id, c);
    EXPECT_TRUE(s.ok()) << s.message;
  }

  int id = -1;
  std::vector<wire::Segment> segments;

 private:
  StepCoordinator& hub_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<proto::HubMessage> inbox_;
};

TEST(SegmentedExchange, EachSegmentIsAveragedAndAnsweredOnceEveryParticipantSentIt) {
  InProcessHub hub(/*workers=*/2, /*steps=*/3);
  hub.spec = TwoSegmentSpec();
  hub.master = std::make_unique<MasterModel>(hub.spec, hub.config.optimizer, 1, 3, 1);
  hub.config.worker_batches = {8, 16};  // unequal, so the weighting shows
  hub.config.global_batch = 24;
  hub.config.aggregate = Aggregation::kMean;  // the weighting itself (auto would clip 4 against 1)
  hub.Rebuild();
  ScriptedWorker a(*hub.coordinator, "a"), b(*hub.coordinator, "b");
  ASSERT_EQ(a.segments.size(), 2u);
  std::thread driver([&] { EXPECT_TRUE(hub.Run()); });

  for (int step = 0; step < 3; ++step) {
    const proto::Assignment pa = a.AwaitAssignment(), pb = b.AwaitAssignment();
    ASSERT_EQ(pa.step(), step);
    ASSERT_EQ(pa.batch() + pb.batch(), 24);
    // The upper segment from both; the lower one held back.
    a.SendSegment(pa, 0, 1.0f);
    b.SendSegment(pb, 0, 4.0f);
    const float expected =
        (pa.batch() * 1.0f + pb.batch() * 4.0f) / static_cast<float>(pa.batch() + pb.batch());
    for (ScriptedWorker* w : {&a, &b}) {
      const proto::HubMessage r = w->Await([&](const proto::HubMessage& m) {
        return m.has_result() && m.result().offset() == w->segments[0].begin;
      });
      ASSERT_TRUE(r.has_result()) << "no early result in step " << step;
      EXPECT_EQ(r.result().step(), step);
      EXPECT_FALSE(r.result().last());
      ASSERT_EQ(static_cast<size_t>(r.result().values_size()), w->segments[0].size());
      EXPECT_FLOAT_EQ(r.result().values(0), expected);
      EXPECT_FLOAT_EQ(r.result().values(r.result().values_size() - 1), expected);
    }
    a.SendSegment(pa, 1, 1.0f);
    b.SendSegment(pb, 1, 4.0f);
  }
  driver.join();
  EXPECT_EQ(hub.coordinator->steps_done(), 3);
}

TEST(SegmentedExchange, AParticipantThatLeavesMidStepNoLongerHoldsTheOthersSegments) {
  InProcessHub hub(/*workers=*/2, /*steps=*/1);
  hub.spec = TwoSegmentSpec();
  hub.master = std::make_unique<MasterModel>(hub.spec, hub.config.optimizer, 1, 3, 1);
  hub.Rebuild();
  auto a = std::make_unique<ScriptedWorker>(*hub.coordinator, "a");
  ScriptedWorker b(*hub.coordinator, "b");
  std::thread driver([&] { EXPECT_TRUE(hub.Run()); });
  const proto::Assignment pa = a->AwaitAssignment(), pb = b.AwaitAssignment();
  b.SendSegment(pb, 0, 2.0f);
  a.reset();  // its stream closes before it sent anything
  const proto::HubMessage r = b.Await([&](const proto::HubMessage& m) {
    return m.has_result() && m.result().offset() == b.segments[0].begin;
  });
  ASSERT_TRUE(r.has_result());
  EXPECT_FLOAT_EQ(r.result().values(0), 2.0f);  // b's alone
  b.SendSegment(pb, 1, 2.0f);
  driver.join();
  EXPECT_EQ(hub.coordinator->steps_done(), 1);
  (void)pa;
}

}  // namespace
}  // namespace mt
