// Fuzzes the hub's handling of worker messages: a StepCoordinator
// (hub/coordinator/step_coordinator.h) in-process, called exactly as the gRPC adapter
// calls it (hub/grpc/hub_service.cc, train_stream.cc: a refused chunk or a
// thrown exception closes the stream; a refused Hello opens none), by a
// script of workers' actions -- Join, Hello, gradient chunks honest and
// hostile, Leave, streams closed or broken -- interleaved with the run
// thread's PublishStep/CompleteStep as mthub makes them, so steps complete
// and the reduce, aggregation and optimizer paths run. Whatever the script,
// the hub must refuse with a status or go on: never crash, touch memory it
// does not own, overflow, hang (-timeout), send on a stream after
// StreamClosed returned for it (in mthub, a use after free), send a
// non-finite result or lose or overrun a step.
//
// The script's format is in tests/fuzz/hub_worker_script.h.
//
// Deterministic but for one op, the threaded barrier: the run thread waits
// at the barrier (bounded) while a second thread brings the step's last
// gradients, so the transport's fast path (AdvanceIfComplete) runs as it
// does in mthub; which thread completes the step may vary, never whether.
//
// MT_FUZZ_WRITE_SEEDS=DIR writes the seed corpus (tests/fuzz/corpus/
// hub_worker_messages_fuzz) and exits.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/compress/gradient_codec.h"
#include "core/model/model_spec.h"
#include "hub/coordinator/step_coordinator.h"
#include "proto/wire.h"
#include "tests/fuzz/hub_worker_fakes.h"
#include "tests/fuzz/hub_worker_script.h"
#include "wire/compression_proto.h"

namespace {

using mt::HubStatus;
using mt::WorkerSlot;
namespace proto = mt::proto;
using namespace mt_fuzz::hub_worker_ops;  // NOLINT: the script's opcodes
using mt_fuzz::CheckingEncoder;
using mt_fuzz::CountingSink;
using mt_fuzz::Fail;
using mt_fuzz::FakeStream;
using mt_fuzz::MutateChunk;
using mt_fuzz::Script;
using mt_fuzz::SlotView;

proto::ModelSpec* g_models[2];
// MT_FUZZ_VERBOSE: a line per op (its time) and per input (the steps it
// reached), to check what a seed does and why an input is slow.
bool g_verbose = false;

constexpr int kMaxOps = 400, kMaxJoins = 12, kMaxStreams = 16;
// The threaded barrier's deadline for a whole round: generous for honest
// chunks, small against -timeout.
constexpr double kThreadedDeadlineSeconds = 0.5;

class Harness {
 public:
  explicit Harness(Script& in) : in_(in) {
    const uint8_t b0 = in.U8(), b1 = in.U8(), b2 = in.U8(), b3 = in.U8(), b4 = in.U8();
    const proto::ModelSpec& spec = *g_models[b0 & 1];
    // none, fp16, int8; topk and lowrank from spare bits of b4, so older
    // seeds keep their meaning.
    const mt::Compression compression = (b4 / 72) % 2 ? mt::Compression::kLowRank
                                        : (b4 / 36) % 2
                                            ? mt::Compression::kTopK
                                            : static_cast<mt::Compression>((b0 >> 1) % 3);
    config_.aggregate = static_cast<mt::Aggregation>((b0 >> 1) / 3 % 4);  // each of the 4
    const int sync[] = {1, 0, 2, 4};
    config_.local_sgd.sync_every = sync[(b0 >> 1) / 12 % 4];
    config_.local_sgd.outer_momentum = (b0 >> 7) ? 0.9 : 0;
    config_.compression = compression;
    config_.workers = 1 + b1 % 3;
    config_.min_workers = 1 + (b1 / 3) % config_.workers;
    const int digests[] = {1000000, 1, 3};
    config_.digest_every = digests[(b1 / 9) % 3];
    if ((b1 / 27) % 2) config_.token = "fuzz-token";
    config_.max_workers = (b1 / 54) % 2 ? 2 : 0;
    const int64_t batch = config_.workers + b2 % 14;
    config_.global_batch = batch;
    config_.batch_policy = (b2 / 14) % 2 ? mt::BatchPolicy::kFixed : mt::BatchPolicy::kBalanced;
    if ((b2 / 28) % 3 == 1) config_.worker_batches = {1, 2, 3};
    config_.local_sgd.overlap_rounds = (b2 / 84) % 2;
    const int64_t steps = 1 + b3 % 12;
    const int64_t samples = batch * (1 + (b3 / 12) % 3) + (b3 / 36) % batch;
    config_.eval_every = b4 % 3;
    config_.checkpoint_every = (b4 / 3) % 3;
    config_.optimizer.kind = (b4 / 9) % 2 ? mt::OptimizerKind::kAdam : mt::OptimizerKind::kSgd;
    config_.local_sgd.outer_lr = (b4 / 18) % 2 ? 0.7 : 1;
    // Every barrier but the threaded one finds its deadline past: no waits.
    config_.deadline.fixed_seconds = 0;
    config_.deadline.factor = 0;
    config_.deadline.floor_seconds = 0;
    plan_ = std::make_unique<mt::RunPlan>(samples, batch, 0, steps);
    master_ = std::make_unique<mt::MasterModel>(spec, config_.optimizer, 1, 1, 1);
    hub_ = std::make_unique<mt::StepCoordinator>(config_, spec, *plan_, *master_, encoder_,
                                                 metrics_, &events_);
  }

  void Run() {
    for (int n = 0; n < kMaxOps && in_.more(); ++n) {
      const uint8_t op = in_.U8() % kOps, target = in_.U8(), how = in_.U8();
      const auto t0 = std::chrono::steady_clock::now();
      Do(static_cast<Op>(op), target, how);
      if (g_verbose)
        std::fprintf(
            stderr, "op %d %d %d: %.2f ms\n", op, target, how,
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count());
      CheckSteps();
    }
    // The run ends as mthub ends it, and every worker closes its stream.
    if (!finished_) {
      if (published_ && !hub_->stop_requested()) hub_->CompleteStep(false);
      hub_->Finish("fuzz script over", -1);
    }
    for (auto& s : streams_)
      if (s->open) Close(*s, HubStatus::Ok());
    CheckSteps();
    if (g_verbose)
      std::fprintf(stderr,
                   "steps %lld of %lld, %d published, %zu joined, %zu streams (%zu refused)\n",
                   static_cast<long long>(steps_), static_cast<long long>(plan_->total_steps()),
                   events_.published.load(), joined_.size(), streams_.size(), refused_.size());
  }

 private:
  void Do(Op op, uint8_t target, uint8_t how) {
    switch (op) {
      case kJoin: return Join(target, how);
      case kHello: return Hello(target, how);
      case kChunk:
        if (FakeStream* s = OpenStream(target)) SendChunk(*s, how);
        return;
      case kGradient:
        if (FakeStream* s = OpenStream(target)) SendRest(*s, how);
        return;
      case kLeave: return Leave(target, how);
      case kClose:
        if (FakeStream* s = OpenStream(target))
          Close(*s, how & 1 ? HubStatus::Error(HubStatus::Code::kInvalidArgument, "broken")
                            : HubStatus::Ok());
        return;
      case kBreak:
        if (FakeStream* s = OpenStream(target)) s->broken = true;
        return;
      case kPublish: return Publish();
      case kBarrier:
        if (published_ && !finished_) EndStep(hub_->CompleteStep(!(how & 1)));
        return;
      case kThreaded: return ThreadedBarrier();
      case kStop: return hub_->RequestStop();
      case kFinish:
        // mthub finishes after its loop: with no step in flight, or stopped.
        if (!finished_ && (!published_ || hub_->stop_requested())) {
          hub_->Finish("fuzz finish", -1);
          finished_ = true;
        }
        return;
      case kOps: return;
    }
  }

  // ---- Workers, through the adapter's calls. ----

  void Join(uint8_t target, uint8_t how) {
    if (joins_ >= kMaxJoins) return;
    ++joins_;
    proto::JoinRequest req;
    req.set_protocol_version(how & 1 ? in_.U32() : mt::wire::kProtocolVersion);
    req.set_token(how & 2 ? in_.Str(12) : config_.token);
    auto* d = req.mutable_device();
    d->set_name(how & 4 ? in_.Str(16) : "w" + std::to_string(target % 3));
    if (how & 8) {
      d->set_cores(static_cast<int32_t>(in_.U32()));
      d->set_threads(static_cast<int32_t>(in_.U32()));
      d->set_device(static_cast<proto::ComputeDevice>(in_.U8() % 4));
    }
    if (how & 16)
      d->set_memory_budget_bytes(static_cast<int64_t>(in_.U64()));
    else if (how & 32)  // around what a few samples need
      d->set_memory_budget_bytes(
          static_cast<int64_t>(master_->worker_fixed_bytes() +
                               (in_.U8() % 8) * master_->worker_bytes_per_sample()) -
          1);
    // A few hosts, so a flood from one meets its limit.
    const std::string peer = how & 64 ? in_.Str(24)
                                      : "ipv4:10.0.0." + std::to_string(target % 3) + ":" +
                                            std::to_string(40000 + joins_);
    proto::JoinReply reply;
    HubStatus s;
    try {
      s = hub_->Join(req, peer, &reply);
    } catch (const std::exception& e) {  // as HubService's Guarded
      s = HubStatus::Error(HubStatus::Code::kInternal, e.what());
    }
    if (!s.ok()) return;
    if (reply.param_count() != master_->param_count() ||
        static_cast<size_t>(reply.segments_size()) != master_->segments().size())
      Fail("a JoinReply that does not describe the model");
    joined_.push_back({reply.worker_id(), reply.session_secret()});
  }

  void Hello(uint8_t target, uint8_t how) {
    if (streams_.size() + refused_.size() >= kMaxStreams) return;
    const bool any = !joined_.empty();
    const Joined* j = any ? &joined_[target % joined_.size()] : nullptr;
    proto::Hello hello;
    hello.set_worker_id(how & 1 || !any ? static_cast<int32_t>(in_.U32()) : j->id);
    if (how & 2 || !any)
      hello.set_session_secret(in_.Str(16));
    else  // its own secret, or another worker's
      hello.set_session_secret(how & 4 ? joined_[in_.U8() % joined_.size()].secret : j->secret);
    hello.set_token(how & 8 ? in_.Str(12) : config_.token);
    if (how & 16) hello.set_placement(in_.Str(24));
    auto link = std::make_unique<FakeStream>();
    int id = -1;
    HubStatus s;
    try {
      s = hub_->Hello(hello, link.get(), &id);
    } catch (const std::exception& e) {
      s = HubStatus::Error(HubStatus::Code::kInternal, e.what());
    }
    if (s.ok()) {
      link->worker_id = id;
      streams_.push_back(std::move(link));
      return;
    }
    // A refused Hello opens no stream: the hub must not keep its link.
    link->open = false;
    link->closed = true;
    refused_.push_back(std::move(link));
  }

  void Leave(uint8_t target, uint8_t how) {
    const bool any = !joined_.empty();
    const Joined* j = any ? &joined_[target % joined_.size()] : nullptr;
    proto::LeaveRequest req;
    req.set_worker_id(how & 1 || !any ? static_cast<int32_t>(in_.U32()) : j->id);
    req.set_session_secret(how & 2 || !any ? in_.Str(16) : j->secret);
    req.set_token(how & 4 ? in_.Str(12) : config_.token);
    req.set_reason(how & 8 ? in_.Str(32) : "stopped by its owner");
    try {
      hub_->Leave(req);
    } catch (const std::exception&) {
      // HubService answers INTERNAL; the worker is on its own.
    }
  }

  // As TrainStream::EndReading: the hub hears of the end, then nothing may
  // be sent on the stream.
  void Close(FakeStream& s, const HubStatus& why) {
    s.open = false;
    try {
      hub_->StreamClosed(
          s.worker_id,
          why.ok() ? why : HubStatus::Error(HubStatus::Code::kInvalidArgument, why.message));
    } catch (const std::exception&) {
      // Logged by TrainStream; the stream finishes anyway.
    }
    s.closed = true;
  }

  // As TrainStream::OnReadDone: a refused chunk, or an exception, ends the stream.
  void Deliver(FakeStream& s, const proto::GradientChunk& c) {
    HubStatus st;
    try {
      st = hub_->Gradient(s.worker_id, c);
    } catch (const std::exception& e) {
      st = HubStatus::Error(HubStatus::Code::kInternal, e.what());
    }
    if (!st.ok()) Close(s, st);
  }

  FakeStream* OpenStream(uint8_t target) {
    std::vector<FakeStream*> open;
    for (auto& s : streams_)
      if (s->open) open.push_back(s.get());
    return open.empty() ? nullptr : open[target % open.size()];
  }

  SlotView View(int id) const {
    SlotView v;
    hub_->ForEachWorker([&](const WorkerSlot& s, const mt::BatchController&) {
      if (s.id != id) return;
      v.state = s.state;
      v.due = s.state == WorkerSlot::State::kActive && s.inbox.expecting() && !s.inbox.complete();
      v.next = s.inbox.segments_received();
      v.a = s.assignment;
    });
    return v;
  }

  int Participants() const {
    int n = 0;
    hub_->ForEachWorker([&](const WorkerSlot& s, const mt::BatchController&) { n += s.in_run(); });
    return n;
  }

  // Segment k of an honest worker's gradient for its assignment: every
  // honest worker's points the same way, a little longer or shorter by its
  // batch. A hostile worker picks another `scale`: its values are then up
  // to `scale` itself (FLT_MAX is FLT_MAX, not a hundredth of it).
  proto::GradientChunk Honest(const SlotView& v, size_t k, float scale = 0.01f) {
    const mt::wire::Segment seg = master_->segments()[k];
    proto::GradientChunk c;
    c.set_step(v.a.step);
    c.set_offset(seg.begin);
    values_.resize(seg.size());
    const float size = scale * (1.0f + 0.01f * static_cast<float>(v.a.offset % 7));
    for (size_t i = 0; i < values_.size(); ++i)
      values_[i] = size * std::cos(0.5f * static_cast<float>((seg.begin + i) % 64));
    mt_fuzz::PackHonest(*config_.compression, seg, master_->param_matrices(), values_, c);
    if (k + 1 == master_->segments().size()) {
      const int batch = v.a.batch * std::max(1, v.a.local_steps);
      c.set_last(true);
      c.set_batch(batch);
      c.set_loss_sum(2.3 * batch);
      c.set_compute_ms(1 + 0.1 * batch);
      if (v.a.step % config_.digest_every == 0) c.set_weights_digest(digest_);
    }
    return c;
  }

  // The segment an honest worker sends next: a late worker sends the rest
  // of the gradient it was late with, whose last chunk brings it back.
  size_t NextSegment(const SlotView& v) const {
    const size_t last = master_->segments().size() - 1;
    return v.state == WorkerSlot::State::kLate ? last : std::min(v.next, last);
  }

  void SendChunk(FakeStream& s, uint8_t how) {
    const SlotView v = View(s.worker_id);
    const size_t segments = master_->segments().size();
    const size_t k = how & 1 ? in_.U8() % segments : NextSegment(v);
    const float scales[] = {-0.01f, 100, 1e28f, FLT_MAX, -FLT_MAX, 0};
    proto::GradientChunk c = Honest(v, k, how & 128 ? scales[in_.U8() % 6] : 0.01f);
    Mutate(c, how);
    Deliver(s, c);
  }

  void Mutate(proto::GradientChunk& c, uint8_t how) {
    MutateChunk(in_, *config_.compression == mt::Compression::kNone, c, how);
  }

  // The rest of the step's gradient, as an honest worker sends it; a
  // worker out of the step (how & 1) sends one chunk anyway.
  void SendRest(FakeStream& s, uint8_t how) {
    const SlotView v = View(s.worker_id);
    if (!v.due && v.state != WorkerSlot::State::kLate) {
      if (how & 1) Deliver(s, Honest(v, NextSegment(v)));
      return;
    }
    for (const auto& c : Rest(v)) {
      Deliver(s, c);
      if (!s.open) return;
    }
  }

  std::vector<proto::GradientChunk> Rest(const SlotView& v) {
    std::vector<proto::GradientChunk> chunks;
    for (size_t k = NextSegment(v); k < master_->segments().size(); ++k)
      chunks.push_back(Honest(v, k));
    return chunks;
  }

  // ---- The run thread, in mthub's order. ----

  void Publish() {
    if (published_ || finished_ || stopped_) return;
    if (hub_->steps_done() >= plan_->total_steps()) return;
    // Neither call may wait: only while enough workers are in, or stopped
    // (PublishStep returns at once when the transport published already).
    const bool stop = hub_->stop_requested();
    if (!waited_) {
      if (!stop && Participants() < config_.workers) return;
      waited_ = true;
      if (!hub_->WaitForWorkers()) return void(stopped_ = true);
    }
    if (!ahead_ && !stop && Participants() < config_.min_workers) return;
    ahead_ = false;
    if (!hub_->PublishStep()) return void(stopped_ = true);
    published_ = true;
    RefreshDigest();
  }

  void EndStep(const mt::StepCoordinator::StepOutcome& out) {
    published_ = false;
    if (out.stopped) stopped_ = true;
  }

  // The run thread waits at the barrier while a second thread, as the
  // transport's would, brings every participant's missing chunks.
  void ThreadedBarrier() {
    if (!published_ || finished_) return;
    struct Due {
      FakeStream* stream;
      std::vector<proto::GradientChunk> chunks;
    };
    std::vector<Due> due;
    int round_steps = 1;
    for (auto& s : streams_) {
      if (!s->open) continue;
      const SlotView v = View(s->worker_id);
      round_steps = std::max(round_steps, v.a.local_steps);
      if (v.due) due.push_back({s.get(), Rest(v)});
    }
    config_.deadline.fixed_seconds = kThreadedDeadlineSeconds / round_steps;
    const int published = events_.published;
    std::thread transport([&] {
      for (auto& d : due)
        for (const auto& c : d.chunks) {
          Deliver(*d.stream, c);
          if (!d.stream->open) break;
        }
    });
    const auto out = hub_->CompleteStep(true);
    transport.join();
    config_.deadline.fixed_seconds = 0;
    EndStep(out);
    // The transport's thread may have completed the step and published the next.
    if (events_.published != published) {
      ahead_ = true;
      RefreshDigest();
    }
  }

  // The weights' digest an honest worker reports: of the step's start.
  void RefreshDigest() {
    if (config_.digest_every < 1000000) digest_ = master_->Digest();
  }

  void CheckSteps() {
    const int64_t done = hub_->steps_done();
    if (done < steps_ || done > plan_->total_steps()) Fail("steps went back or past the run");
    steps_ = done;
  }

  struct Joined {
    int id;
    std::string secret;
  };

  Script& in_;
  mt::HubConfig config_;
  std::unique_ptr<mt::RunPlan> plan_;
  std::unique_ptr<mt::MasterModel> master_;
  CheckingEncoder encoder_;
  mt::RunMetrics metrics_;
  CountingSink events_;
  // Before the hub, so they outlive it: it holds their addresses.
  std::vector<std::unique_ptr<FakeStream>> streams_, refused_;
  std::unique_ptr<mt::StepCoordinator> hub_;
  std::vector<Joined> joined_;
  int joins_ = 0;
  bool published_ = false;  // a step is out and CompleteStep not yet called
  bool ahead_ = false;      // the transport published the next step already
  bool waited_ = false, stopped_ = false, finished_ = false;
  int64_t steps_ = 0;
  uint64_t digest_ = 0;
  std::vector<float> values_;
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);
  g_verbose = std::getenv("MT_FUZZ_VERBOSE") != nullptr;
  g_models[0] =
      new proto::ModelSpec(mt::ParseModelSpec(mt_fuzz::kTinyModel, "the fuzzer's tiny model"));
  g_models[1] =
      new proto::ModelSpec(mt::ParseModelSpec(mt_fuzz::kTwoSegmentModel, "the fuzzer's model"));
  if (const char* seeds = std::getenv("MT_FUZZ_WRITE_SEEDS")) {
    mt_fuzz::WriteHubWorkerSeeds(seeds);
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Script in(data, size);
  Harness harness(in);
  harness.Run();
  return 0;
}
