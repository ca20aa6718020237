// Every incoming message is validated before it touches the sum: a raw gRPC
// client sends each kind of bad message while a real worker trains; each is
// refused with a clear status, and training goes on unpoisoned.
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <filesystem>
#include <limits>
#include <mutex>
#include <thread>

#include "hub.grpc.pb.h"
#include "hub/hub.h"
#include "proto/wire.h"
#include "tests/support/idx_writer.h"
#include "tls/channel_credentials.h"
#include "worker/worker_config.h"
#include "worker/worker_control.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using Stream = grpc::ClientReaderWriter<proto::WorkerMessage, proto::HubMessage>;

// The hub's steps as they complete, so a test waits for the step it needs
// instead of polling the hub.
class StepWatcher final : public HubEventSink {
 public:
  void OnEvent(const HubEvent& e) override {
    if (e.kind != HubEvent::Kind::kStepDone) return;
    std::lock_guard<std::mutex> lock(mu_);
    steps_ = e.step;
    cv_.notify_all();
  }
  int64_t done() {
    std::lock_guard<std::mutex> lock(mu_);
    return steps_;
  }
  // Whether the hub has done `steps` steps, waiting up to timeout_s.
  bool WaitFor(int64_t steps, double timeout_s) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::duration<double>(timeout_s),
                        [&] { return steps_ >= steps; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int64_t steps_ = 0;
};

class Validation : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("mt-valid-" + std::to_string(getpid()));
    fs::create_directories(dir_);
    test_support::WriteIdxDataset(dir_.string(), 2000, 100, 9);
    HubConfig hc;
    hc.workers = 1;
    hc.bind = "127.0.0.1";
    hc.port = 0;
    hc.dataset = dir_.string();
    hc.epochs = 100000;  // runs until the test stops it
    hc.token = "secret";
    hc.digest_every = 1;
    hc.local_sgd.sync_every = 1;  // per-step messages, whatever the machine's load
    hc.hello_timeout_seconds = 2;
    hub_ = std::make_unique<Hub>(hc, &steps_);
    hub_->Start();
    hub_thread_ = std::thread([this] { hub_code_ = hub_->Run(); });
    worker_thread_ = std::thread([this] {
      WorkerConfig wc;
      wc.hub = Target();
      wc.token = "secret";
      wc.name = "honest";
      wc.device = DeviceChoice::kCpu;
      wc.connect_timeout_seconds = 30;
      WorkerControl control;
      worker_code_ = RunWorker(wc, control);
    });
    // A bogus client over the same TLS as any worker (trusting on first use).
    stub_ = proto::Hub::NewStub(grpc::CreateChannel(
        Target(), tls::MakeChannelSecurity(tls::ClientOptions{}, Target()).credentials));
    // The honest worker must be the one the hub waits for: bogus clients
    // join later, at a step boundary.
    ASSERT_TRUE(steps_.WaitFor(1, 30)) << "the honest worker never started training";
  }
  void TearDown() override {
    hub_->RequestStop();
    hub_thread_.join();
    worker_thread_.join();
    fs::remove_all(dir_);
  }
  std::string Target() const { return "127.0.0.1:" + std::to_string(hub_->port()); }

  grpc::Status Join(uint32_t version, const std::string& token, proto::JoinReply* reply) {
    proto::JoinRequest req;
    req.set_protocol_version(version);
    req.set_token(token);
    req.mutable_device()->set_name("bogus");
    grpc::ClientContext ctx;
    return stub_->Join(&ctx, req, reply);
  }

  // A joined client that has received the model and its first assignment.
  struct Bogus {
    grpc::ClientContext ctx;
    std::unique_ptr<Stream> stream;
    proto::Assignment next;
    uint64_t params = 0;
    std::vector<wire::Segment> segments;  // in the order they must travel
  };
  void Admit(Bogus& b) {
    proto::JoinReply reply;
    ASSERT_TRUE(Join(wire::kProtocolVersion, "secret", &reply).ok());
    b.params = reply.param_count();
    b.segments =
        wire::SegmentsFromBegins({reply.segments().begin(), reply.segments().end()}, b.params);
    ASSERT_GT(b.segments.size(), 1u) << "LeNet-5's gradient should travel in several segments";
    b.stream = stub_->Train(&b.ctx);
    proto::WorkerMessage hello;
    hello.mutable_hello()->set_worker_id(reply.worker_id());
    hello.mutable_hello()->set_token("secret");
    hello.mutable_hello()->set_session_secret(reply.session_secret());
    ASSERT_TRUE(b.stream->Write(hello));
    proto::HubMessage m;
    while (b.stream->Read(&m)) {
      if (m.has_plan()) {
        for (const auto& a : m.plan().assignments())
          if (a.worker_id() == reply.worker_id()) b.next = a;
        return;
      }
    }
    FAIL() << "no model received";
  }
  // Segment k of a gradient whose values are all `value` (`extra` floats
  // more or fewer than the segment holds), for b's next step.
  static proto::WorkerMessage Segment(const Bogus& b, size_t k, float value, int extra = 0) {
    proto::WorkerMessage m;
    auto* c = m.mutable_gradient();
    c->set_step(b.next.step());
    c->set_offset(b.segments[k].begin);
    const std::vector<float> g(static_cast<size_t>(static_cast<int>(b.segments[k].size()) + extra),
                               value);
    wire::PackFloats(g.data(), g.size(), c->mutable_values());
    const bool last = k + 1 == b.segments.size();
    c->set_last(last);
    if (last) c->set_batch(b.next.batch());
    return m;
  }
  // Sends the chunks and returns the status the hub ends the stream with.
  grpc::Status SendBad(Bogus& b, const std::vector<proto::WorkerMessage>& chunks) {
    for (const auto& m : chunks) b.stream->Write(m);
    b.stream->WritesDone();
    proto::HubMessage ignored;
    while (b.stream->Read(&ignored)) {
    }
    return b.stream->Finish();
  }
  void ExpectRefused(const grpc::Status& s, grpc::StatusCode code, const std::string& needle) {
    EXPECT_EQ(s.error_code(), code) << s.error_message();
    // What the refused worker logs: it must say what was wrong.
    EXPECT_THAT(s.error_message(), ::testing::HasSubstr(needle));
  }

  fs::path dir_;
  StepWatcher steps_;  // outlives the hub that calls it
  std::unique_ptr<Hub> hub_;
  std::unique_ptr<proto::Hub::Stub> stub_;
  std::thread hub_thread_, worker_thread_;
  int hub_code_ = -1, worker_code_ = -1;
};

TEST_F(Validation, BadMessagesAreRefusedAndTrainingGoesOn) {
  proto::JoinReply reply;
  ExpectRefused(Join(99, "secret", &reply), grpc::StatusCode::FAILED_PRECONDITION,
                "protocol version 99");
  ExpectRefused(Join(wire::kProtocolVersion, "wrong", &reply), grpc::StatusCode::UNAUTHENTICATED,
                "token");

  {  // A stream that does not start with Hello.
    grpc::ClientContext ctx;
    auto s = stub_->Train(&ctx);
    proto::WorkerMessage m;
    m.mutable_gradient()->set_step(0);
    s->Write(m);
    s->WritesDone();
    ExpectRefused(s->Finish(), grpc::StatusCode::INVALID_ARGUMENT, "Hello");
  }
  {  // Hello with a worker id nobody was given.
    grpc::ClientContext ctx;
    auto s = stub_->Train(&ctx);
    proto::WorkerMessage m;
    m.mutable_hello()->set_worker_id(4242);
    m.mutable_hello()->set_token("secret");
    s->Write(m);
    s->WritesDone();
    // As for a wrong session secret: which ids exist is not told.
    ExpectRefused(s->Finish(), grpc::StatusCode::UNAUTHENTICATED, "unknown worker id or wrong");
  }

  const float nan = std::numeric_limits<float>::quiet_NaN();
  {
    Bogus b;
    Admit(b);
    proto::WorkerMessage m = Segment(b, 0, 0.01f);
    m.mutable_gradient()->mutable_values()->Set(17, nan);
    ExpectRefused(SendBad(b, {m}), grpc::StatusCode::INVALID_ARGUMENT, "non-finite");
  }
  {
    Bogus b;
    Admit(b);
    ExpectRefused(SendBad(b, {Segment(b, 0, 0.01f, -5)}), grpc::StatusCode::INVALID_ARGUMENT,
                  "floats, its segment");
  }
  {
    Bogus b;
    Admit(b);
    ExpectRefused(SendBad(b, {Segment(b, 0, 0.01f, 3)}), grpc::StatusCode::INVALID_ARGUMENT,
                  "floats, its segment");
  }
  {
    Bogus b;
    Admit(b);
    proto::WorkerMessage m = Segment(b, 0, 0.01f);
    m.mutable_gradient()->set_step(b.next.step() + 7);
    ExpectRefused(SendBad(b, {m}), grpc::StatusCode::INVALID_ARGUMENT, "expected step");
  }
  {
    Bogus b;
    Admit(b);
    std::vector<proto::WorkerMessage> all;
    for (size_t k = 0; k < b.segments.size(); ++k) all.push_back(Segment(b, k, 0.01f));
    all.back().mutable_gradient()->set_batch(b.next.batch() + 100);
    ExpectRefused(SendBad(b, all), grpc::StatusCode::INVALID_ARGUMENT, "assigned");
  }
  {
    Bogus b;
    Admit(b);
    proto::WorkerMessage m = Segment(b, 0, 0.01f);
    m.mutable_gradient()->set_offset(50);
    ExpectRefused(SendBad(b, {m}), grpc::StatusCode::INVALID_ARGUMENT, "offset");
  }
  {  // Segments out of their order: the last layer's must come first.
    Bogus b;
    Admit(b);
    ExpectRefused(SendBad(b, {Segment(b, b.segments.size() - 1, 0.01f)}),
                  grpc::StatusCode::INVALID_ARGUMENT, "offset");
  }
  {  // A gradient that claims to be whole after its first segment.
    Bogus b;
    Admit(b);
    proto::WorkerMessage m = Segment(b, 0, 0.01f);
    m.mutable_gradient()->set_last(true);
    m.mutable_gradient()->set_batch(b.next.batch());
    ExpectRefused(SendBad(b, {m}), grpc::StatusCode::INVALID_ARGUMENT, "marked last");
  }

  // Training goes on with the honest worker, and the model is clean.
  const int64_t before = hub_->steps_done();
  EXPECT_TRUE(steps_.WaitFor(before + 50, 30)) << "stuck at step " << hub_->steps_done();
  hub_->RequestStop();
  hub_thread_.join();
  hub_thread_ = std::thread([] {});
  worker_thread_.join();
  worker_thread_ = std::thread([] {});
  EXPECT_EQ(hub_code_, 0);
  EXPECT_EQ(worker_code_, 0);
  for (float w : hub_->Weights()) ASSERT_TRUE(std::isfinite(w));
}

TEST_F(Validation, StreamsThatNeverSayHelloAreClosedAndTrainingGoesOn) {
  // Silent streams, as a peer that only wants to hold the hub's calls
  // would open them: each is closed after the 2 s given for Hello.
  constexpr int kSilent = 16;
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::unique_ptr<Stream>> silent;
  const auto opened = std::chrono::steady_clock::now();
  for (int i = 0; i < kSilent; ++i) {
    contexts.push_back(std::make_unique<grpc::ClientContext>());
    contexts.back()->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    silent.push_back(stub_->Train(contexts.back().get()));
  }
  for (auto& s : silent) {
    proto::HubMessage m;
    EXPECT_FALSE(s->Read(&m)) << "the hub sent something to a stream that never said Hello";
    const grpc::Status status = s->Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << status.error_message();
    EXPECT_THAT(status.error_message(), ::testing::HasSubstr("Hello"));
  }
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - opened).count();
  EXPECT_GE(waited, 1.9);   // not before the timeout...
  EXPECT_LT(waited, 25.0);  // ...and not left to the client's own deadline
  // A worker that says Hello at once is unaffected: the honest one trains on.
  const int64_t before = steps_.done();
  EXPECT_TRUE(steps_.WaitFor(before + 3, 30));
}

TEST_F(Validation, AWorkerWhoseWeightsDriftedIsResynced) {
  Bogus b;
  Admit(b);
  // A well-formed gradient, but the digest says this worker's weights are
  // not the hub's: the hub must send the whole state again, not the rest of
  // the result (segments averaged before the digest arrived may come first).
  for (size_t k = 0; k < b.segments.size(); ++k) {
    proto::WorkerMessage m = Segment(b, k, 0.0f);
    if (k + 1 == b.segments.size()) m.mutable_gradient()->set_weights_digest(12345);
    ASSERT_TRUE(b.stream->Write(m));
  }
  proto::HubMessage reply;
  bool resynced = false, got_result = false;
  while (b.stream->Read(&reply)) {
    if (reply.has_result() && reply.result().last()) got_result = true;
    if (reply.has_state()) resynced = true;
    if (reply.has_plan() || reply.has_stop() || (reply.has_result() && reply.result().last()))
      break;
  }
  EXPECT_TRUE(resynced);
  EXPECT_FALSE(got_result);
  b.ctx.TryCancel();
}

}  // namespace
}  // namespace mt
