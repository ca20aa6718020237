// The step coordinator's tests' cluster, with no network: N fake workers run as
// threads behind an in-memory transport, as gloo tests N ranks. Each fake
// worker's "gradient" is the mean over its assigned sample positions of a
// fixed function of the position, so the weighted average the hub applies
// equals the mean over the whole global batch however it is split: runs
// with any worker count must end with the weights of a one-worker run.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "core/compress/gradient_codec.h"
#include "core/model/model_spec.h"
#include "hub/coordinator/step_coordinator.h"
#include "proto/wire.h"
#include "wire/compression_proto.h"

namespace mt::test_support {

using Clock = std::chrono::steady_clock;

constexpr auto kWait = std::chrono::seconds(20);  // a bound on every wait, so no test can hang

inline proto::ModelSpec TinySpec() {
  return ParseModelSpec(R"(name: "tiny" input { channels: 1 height: 1 width: 4 }
                           layer { name: "flat" flatten {} }
                           layer { name: "fc" dense { units: 3 } })",
                        "test");
}

// As in real training, a direction every sample shares plus each sample's
// own noise, so honest workers agree (hostile ones can be told apart).
inline float SampleGradient(int64_t position, size_t j) {
  return 0.02f * std::cos(0.5f * static_cast<float>(j)) +
         0.01f * std::sin(0.37f * static_cast<float>(position) + 0.11f * static_cast<float>(j));
}

struct FakeEncoded final : EncodedMessage {
  proto::HubMessage message;
};

class FakeEncoder final : public MessageEncoder {
 public:
  Encoded Encode(const proto::HubMessage& m) override {
    auto e = std::make_shared<FakeEncoded>();
    e->message = m;
    return e;
  }
};

// Records every event; lets a test wait for one.
class EventLog final : public HubEventSink {
 public:
  void OnEvent(const HubEvent& e) override {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(e);
    cv_.notify_all();
  }
  int Count(HubEvent::Kind kind, int worker = -1) const {
    std::lock_guard<std::mutex> lock(mu_);
    int n = 0;
    for (const auto& e : events_) n += e.kind == kind && (worker < 0 || e.worker == worker);
    return n;
  }
  std::vector<HubEvent> Of(HubEvent::Kind kind) const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<HubEvent> out;
    for (const auto& e : events_)
      if (e.kind == kind) out.push_back(e);
    return out;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<HubEvent> events_;
};

// What a fake worker does wrong, and at which step.
struct Fault {
  // kSlowLink: every gradient arrives link_ms after the compute it reports.
  // kNarrowLink: after link_ms uncompressed, in proportion to its bytes
  // encoded (a link whose cost is bandwidth; kSlowLink's is latency).
  enum class Kind {
    kNone,
    kDrop,
    kLate,
    kLateAgain,  // late at every step it takes part in from `step` on
    kNanGradient,
    kRejoin,
    kLeaveMidStep,
    kSlowLink,
    kNarrowLink,
    // Hostile from `step` on (-1: from the start): every gradient sent
    // negated, times 1e4, or as +-FLT_MAX.
    kSignFlip,
    kScale1e4,
    kFltMax,
  } kind = Kind::kNone;
  int64_t step = -1;
  int link_ms = 30;
  // Not a fault: a device this slow computes each sample of its
  // assignment in this long (it sleeps and reports it); 0: instantly,
  // reporting 0.1 ms a sample.
  double ms_per_sample = 0;
  bool hostile_at(int64_t s) const {
    return (kind == Kind::kSignFlip || kind == Kind::kScale1e4 || kind == Kind::kFltMax) &&
           s >= step;
  }
};

// Plays one worker: joins, opens its "stream", and answers every plan with
// the gradient of its assignment.
class FakeWorker final : public WorkerLink {
 public:
  FakeWorker(StepCoordinator& hub, std::string name, Fault fault)
      : hub_(hub), name_(std::move(name)), fault_(fault) {}
  ~FakeWorker() override {
    if (thread_.joinable()) thread_.join();
  }

  void Start() {
    thread_ = std::thread([this] { Run(); });
  }
  void Join() { thread_.join(); }

  bool Send(Encoded m) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return false;
    inbox_.push_back(static_cast<const FakeEncoded&>(*m).message);
    cv_.notify_all();
    return true;
  }

  // The id the hub gave it (ids follow the order of joining, which threads race for).
  int id() const { return id_; }
  int sessions = 0, steps = 0, left_out = 0, states = 0;
  std::vector<int> local_steps;                // of each assignment it answered (0: per-step mode)
  std::vector<proto::Assignment> assignments;  // each one it answered
  // How each plan it answered asked it to encode (it does), and how each
  // result chunk it got was encoded.
  std::vector<proto::Compression> plan_encodings, result_encodings;
  bool got_stop = false;
  std::string refusal;

 private:
  bool Connect() {
    proto::JoinRequest join;
    join.set_protocol_version(wire::kProtocolVersion);
    join.mutable_device()->set_name(name_);
    proto::JoinReply reply;
    if (HubStatus s = hub_.Join(join, "fake", &reply); !s.ok()) {
      refusal = s.message;
      return false;
    }
    proto::Hello hello;
    hello.set_worker_id(reply.worker_id());
    hello.set_session_secret(reply.session_secret());
    secret_ = reply.session_secret();
    params_ = reply.param_count();
    segments_ =
        wire::SegmentsFromBegins({reply.segments().begin(), reply.segments().end()}, params_);
    {
      std::lock_guard<std::mutex> lock(mu_);
      closed_ = false;
      inbox_.clear();
    }
    if (HubStatus s = hub_.Hello(hello, this, &id_); !s.ok()) {
      refusal = s.message;
      return false;
    }
    ++sessions;
    return true;
  }

  void Close(const HubStatus& why) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      closed_ = true;
    }
    hub_.StreamClosed(id_, why);
  }

  bool Next(proto::HubMessage* m) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_for(lock, kWait, [&] { return !inbox_.empty(); })) {
      ADD_FAILURE() << name_ << ": no message from the hub for " << kWait.count() << " s";
      return false;
    }
    *m = std::move(inbox_.front());
    inbox_.pop_front();
    return true;
  }

  void Run() {
    if (!Connect()) return;
    proto::HubMessage m;
    std::vector<proto::GradientChunk> held;  // a late gradient, sent once left out
    auto deliver = [&](const std::vector<proto::GradientChunk>& chunks) {
      for (const auto& c : chunks)
        if (HubStatus s = hub_.Gradient(id_, c); !s.ok()) return s;
      return HubStatus::Ok();
    };
    while (Next(&m)) {
      if (m.has_stop()) {
        got_stop = true;
        return;
      }
      if (m.has_state() && m.state().last()) ++states;
      if (m.has_result()) result_encodings.push_back(m.result().compression());
      if (m.has_left_out()) {
        ++left_out;
        deliver(held);
        held.clear();
        continue;
      }
      const proto::StepPlan* plan = m.has_plan()                          ? &m.plan()
                                    : m.has_result() && m.result().last() ? &m.result().plan()
                                                                          : nullptr;
      if (!plan) continue;
      for (const auto& a : plan->assignments()) {
        if (a.worker_id() != id_) continue;
        if (fault_.step == a.step() && fault_.kind == Fault::Kind::kDrop)
          return Close(HubStatus::Ok());
        if (fault_.step == a.step() && fault_.kind == Fault::Kind::kRejoin) {
          fault_.kind = Fault::Kind::kNone;
          Close(HubStatus::Ok());
          if (!Connect()) return;
          break;
        }
        const std::vector<proto::GradientChunk> chunks = Gradient(a, plan->compression());
        if (fault_.step == a.step() && fault_.kind == Fault::Kind::kLeaveMidStep) {
          // Leave, as a stopping worker does, with its gradient still in flight.
          proto::LeaveRequest leave;
          leave.set_worker_id(id_);
          leave.set_session_secret(secret_);
          leave.set_reason("stopped by its owner");
          if (HubStatus s = hub_.Leave(leave); !s.ok()) refusal = s.message;
          if (HubStatus s = deliver(chunks); !s.ok()) refusal = s.message;
          return Close(HubStatus::Ok());
        }
        if ((fault_.step == a.step() && fault_.kind == Fault::Kind::kLate) ||
            (fault_.kind == Fault::Kind::kLateAgain && a.step() >= fault_.step)) {
          held = chunks;
          break;
        }
        if (fault_.ms_per_sample > 0)
          std::this_thread::sleep_for(std::chrono::microseconds(
              static_cast<int64_t>(1000 * fault_.ms_per_sample * Samples(a))));
        if (fault_.kind == Fault::Kind::kSlowLink)
          std::this_thread::sleep_for(std::chrono::milliseconds(fault_.link_ms));
        if (fault_.kind == Fault::Kind::kNarrowLink) {
          // In proportion to what a real model's gradient takes (this one's
          // few values would make the blocks' fixed costs count).
          constexpr size_t kRealModel = size_t{1} << 20;
          const double share =
              static_cast<double>(EncodedBytes(FromProto(plan->compression()), kRealModel)) /
              static_cast<double>(EncodedBytes(Compression::kNone, kRealModel));
          std::this_thread::sleep_for(
              std::chrono::microseconds(static_cast<int64_t>(1000 * fault_.link_ms * share)));
        }
        if (HubStatus s = deliver(chunks); !s.ok()) {
          refusal = s.message;
          return Close(s);
        }
        ++steps;
        local_steps.push_back(a.local_steps());
        assignments.push_back(a);
        plan_encodings.push_back(plan->compression());
      }
    }
  }

  // The gradient of an assignment, one chunk per segment in travel order,
  // encoded as the plan says (no error feedback: one step's worth).
  std::vector<proto::GradientChunk> Gradient(const proto::Assignment& a,
                                             proto::Compression encoding) const {
    const bool poison = fault_.kind == Fault::Kind::kNanGradient && fault_.step == a.step();
    std::vector<proto::GradientChunk> chunks;
    for (const wire::Segment& seg : segments_) {
      proto::GradientChunk c;
      c.set_step(a.step());
      c.set_offset(seg.begin);
      for (size_t j = seg.begin; j < seg.end; ++j) {
        float sum = 0;
        for (int64_t p = a.offset(); p < a.offset() + a.batch(); ++p) sum += SampleGradient(p, j);
        float v = poison && j == 0 ? NAN : sum / static_cast<float>(a.batch());
        if (fault_.hostile_at(a.step()))
          v = fault_.kind == Fault::Kind::kSignFlip   ? -v
              : fault_.kind == Fault::Kind::kScale1e4 ? 1e4f * v
                                                      : (v < 0 ? -FLT_MAX : FLT_MAX);
        c.add_values(v);
      }
      if (encoding != proto::COMPRESSION_NONE) {
        EncodeFloats(FromProto(encoding), c.values().data(), static_cast<size_t>(c.values_size()),
                     nullptr, c.mutable_packed());
        c.clear_values();
        c.set_compression(encoding);
      }
      chunks.push_back(std::move(c));
    }
    proto::GradientChunk& last = chunks.back();
    last.set_last(true);
    last.set_batch(Samples(a));
    last.set_loss_sum(a.batch());
    last.set_compute_ms(fault_.ms_per_sample > 0 ? fault_.ms_per_sample * Samples(a)
                                                 : 0.1 * a.batch());
    return chunks;
  }

  // A round's samples.
  static int Samples(const proto::Assignment& a) {
    return a.batch() * std::max(1, a.local_steps());
  }

  StepCoordinator& hub_;
  const std::string name_;
  Fault fault_;
  int id_ = -1;
  std::string secret_;  // the session secret from its JoinReply
  size_t params_ = 0;
  std::vector<wire::Segment> segments_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<proto::HubMessage> inbox_;
  bool closed_ = false;
  std::thread thread_;
};

// A hub without a network: the coordinator, its master model and a driver
// thread that runs steps as mthub does.
struct InProcessHub {
  // min_workers: below this many the hub waits, which makes a test's
  // faulty worker come back before the run can end without it.
  explicit InProcessHub(int workers, int64_t steps, double deadline_s = 30, int min_workers = 1) {
    config.workers = workers;
    config.min_workers = min_workers;
    config.global_batch = 12 * workers;
    config.deadline.fixed_seconds = deadline_s;
    config.digest_every = 1000000;
    config.local_sgd.sync_every = 1;  // fake workers that sleep would make auto take local steps
    config.compression = Compression::kNone;  // and auto encode (tests of auto set it back)
    config.optimizer.momentum = 0.9f;
    plan = std::make_unique<RunPlan>(100000, config.global_batch, 0, steps);
    master = std::make_unique<MasterModel>(spec, config.optimizer, 1, 3, 1);
    Rebuild();
  }

  // A new coordinator after a test changed the config (global batch, token).
  void Rebuild() {
    plan = std::make_unique<RunPlan>(100000, config.global_batch, 0, plan->total_steps());
    coordinator =
        std::make_unique<StepCoordinator>(config, spec, *plan, *master, encoder, metrics, &events);
  }

  // Runs the whole schedule; false if a watchdog had to stop it.
  bool Run() {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    std::atomic<bool> watchdog_fired{false};
    std::thread watchdog([&] {
      std::unique_lock<std::mutex> lock(mu);
      if (!cv.wait_for(lock, 2 * kWait, [&] { return done; })) {
        watchdog_fired = true;
        coordinator->RequestStop();
      }
    });
    if (coordinator->WaitForWorkers()) {
      while (coordinator->steps_done() < plan->total_steps()) {
        if (!coordinator->PublishStep()) break;
        if (coordinator->CompleteStep().stopped) break;
      }
    }
    coordinator->Finish("done", -1);
    {
      std::lock_guard<std::mutex> lock(mu);
      done = true;
    }
    cv.notify_all();
    watchdog.join();
    return !watchdog_fired;
  }

  HubConfig config;
  proto::ModelSpec spec = TinySpec();
  std::unique_ptr<RunPlan> plan;
  FakeEncoder encoder;
  RunMetrics metrics;
  EventLog events;
  std::unique_ptr<MasterModel> master;
  std::unique_ptr<StepCoordinator> coordinator;
};

struct RunResult {
  std::vector<float> weights;
  std::vector<std::unique_ptr<FakeWorker>> workers;
  int64_t steps = 0;
};

inline RunResult RunWith(InProcessHub& hub, const std::vector<Fault>& faults) {
  RunResult r;
  for (size_t i = 0; i < faults.size(); ++i) {
    r.workers.push_back(
        std::make_unique<FakeWorker>(*hub.coordinator, "w" + std::to_string(i), faults[i]));
    r.workers.back()->Start();
  }
  EXPECT_TRUE(hub.Run()) << "the watchdog stopped the run";
  for (auto& w : r.workers) w->Join();
  r.weights = hub.coordinator->MasterWeights();
  r.steps = hub.coordinator->steps_done();
  return r;
}

inline void ExpectNear(const std::vector<float>& a, const std::vector<float>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5f) << "weight " << i;
}

}  // namespace mt::test_support
