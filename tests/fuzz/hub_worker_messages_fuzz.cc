// Fuzzes the hub's handling of worker messages: a StepCoordinator
// (hub/step_coordinator.h) in-process, called exactly as the gRPC adapter
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
// The input is read with FuzzedDataProvider as integers only, which it
// takes from the input's end: a script is its input reversed. A header of
// 5 bytes picks the run (model, compression, aggregation, --sync-every,
// workers, batch, run length, ...); then each op is 3 bytes, opcode,
// target and `how` (0: as an honest worker does it), followed by the
// details a non-zero `how` asks for.
//
// Deterministic but for one op, the threaded barrier: the run thread waits
// at the barrier (bounded) while a second thread brings the step's last
// gradients, so the transport's fast path (AdvanceIfComplete) runs as it
// does in mthub; which thread completes the step may vary, never whether.
//
// MT_FUZZ_WRITE_SEEDS=DIR writes the seed corpus (tests/fuzz/corpus/
// hub_worker_messages_fuzz) and exits.
#include <fuzzer/FuzzedDataProvider.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cfloat>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/compress/gradient_codec.h"
#include "core/model/model_spec.h"
#include "hub/step_coordinator.h"
#include "proto/wire.h"

namespace {

using mt::HubStatus;
using mt::WorkerSlot;
namespace proto = mt::proto;

// 15 parameters, one gradient segment: the fast case.
constexpr const char* kTinyModel = R"(name: "tiny" input { channels: 1 height: 1 width: 4 }
  layer { name: "flat" flatten {} } layer { name: "fc" dense { units: 3 } })";
// 17K parameters in two segments (wire::kMinSegmentFloats): results go out
// segment by segment while the other is still due. Under 128 KiB a buffer,
// so ASan's allocator reuses memory instead of mapping it afresh per input.
constexpr const char* kTwoSegmentModel = R"(name: "two" input { channels: 1 height: 1 width: 4 }
  layer { name: "flat" flatten {} } layer { name: "fc1" dense { units: 128 } }
  layer { name: "relu" relu {} } layer { name: "fc2" dense { units: 128 } })";

proto::ModelSpec* g_models[2];
// MT_FUZZ_VERBOSE: a line per op (its time) and per input (the steps it
// reached), to check what a seed does and why an input is slow.
bool g_verbose = false;

enum Op : uint8_t {
  kJoin,
  kHello,
  kChunk,     // one chunk, honest or mutated
  kGradient,  // the rest of the step's gradient, honestly
  kLeave,
  kClose,     // the stream ends (how & 1: broken, else closed by the worker)
  kBreak,     // the link refuses sends from now on, as a broken one does
  kPublish,   // the run thread: PublishStep (WaitForWorkers first)
  kBarrier,   // the run thread: CompleteStep, deadline already past
  kThreaded,  // CompleteStep while another thread completes the step
  kStop,      // RequestStop
  kFinish,    // the run ends: Finish, as mthub after its loop
  kOps
};
constexpr int kMaxOps = 400, kMaxJoins = 12, kMaxStreams = 16;
// The threaded barrier's deadline for a whole round: generous for honest
// chunks, small against -timeout.
constexpr double kThreadedDeadlineSeconds = 0.5;

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "hub_worker_messages_fuzz: %s\n", what);
  std::abort();
}

// Reads the script (see the top of the file).
class Script {
 public:
  Script(const uint8_t* data, size_t size) : in_(data, size) {}
  bool more() { return in_.remaining_bytes() > 0; }
  uint8_t U8() { return in_.ConsumeIntegral<uint8_t>(); }
  uint16_t U16() { return in_.ConsumeIntegral<uint16_t>(); }
  uint32_t U32() { return in_.ConsumeIntegral<uint32_t>(); }
  uint64_t U64() { return in_.ConsumeIntegral<uint64_t>(); }
  // Any bit pattern: NaNs, infinities and denormals come for free.
  float F32() {
    const uint32_t bits = U32();
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }
  double F64() {
    const uint64_t bits = U64();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  }
  std::string Str(size_t max) {
    std::string s(U8() % (max + 1), '\0');
    for (char& c : s) c = static_cast<char>(U8());
    return s;
  }

 private:
  FuzzedDataProvider in_;
};

// The hub keeps nothing of what it sends but this check: an average is
// checked before it goes out, so a result is always finite.
class CheckingEncoder final : public mt::MessageEncoder {
 public:
  mt::Encoded Encode(const proto::HubMessage& m) override {
    if (m.has_result())
      for (float v : m.result().values())
        if (!std::isfinite(v)) Fail("the hub sent a non-finite result");
    return std::make_shared<mt::EncodedMessage>();
  }
};

// One Train stream. It outlives StreamClosed (a TrainStream does not), so
// a send after that is caught here rather than as a use after free.
class FakeStream final : public mt::WorkerLink {
 public:
  bool Send(mt::Encoded) override {
    if (closed) Fail("the hub sent on a stream after StreamClosed returned");
    return !broken;
  }
  int worker_id = -1;
  bool open = true;  // the harness's view: the worker may still send
  std::atomic<bool> broken{false}, closed{false};
};

class CountingSink final : public mt::HubEventSink {
 public:
  void OnEvent(const mt::HubEvent& e) override {
    if (e.kind == mt::HubEvent::Kind::kStepPublished) ++published;
  }
  std::atomic<int> published{0};
};

// What the hub knows of a worker, read under its lock: where an honest
// worker's next chunk goes.
struct SlotView {
  WorkerSlot::State state = WorkerSlot::State::kGone;
  bool due = false;  // in the step, its gradient not yet whole
  size_t next = 0;   // the segment expected next
  proto::Assignment a;
};

class Harness {
 public:
  explicit Harness(Script& in) : in_(in) {
    const uint8_t b0 = in.U8(), b1 = in.U8(), b2 = in.U8(), b3 = in.U8(), b4 = in.U8();
    const proto::ModelSpec& spec = *g_models[b0 & 1];
    const mt::Compression compressions[] = {mt::Compression::kNone, mt::Compression::kFp16,
                                            mt::Compression::kInt8};
    const mt::Compression compression = compressions[(b0 >> 1) % 3];
    const char* aggregations[] = {"auto", "mean", "trimmed-mean", "median"};
    config_.aggregate = aggregations[(b0 >> 1) / 3 % 4];
    const int sync[] = {1, 0, 2, 4};
    config_.sync_every = sync[(b0 >> 1) / 12 % 4];
    config_.outer_momentum = (b0 >> 7) ? 0.9 : 0;
    config_.compression = mt::CompressionName(compression);
    config_.workers = 1 + b1 % 3;
    config_.min_workers = 1 + (b1 / 3) % config_.workers;
    const int digests[] = {1000000, 1, 3};
    config_.digest_every = digests[(b1 / 9) % 3];
    if ((b1 / 27) % 2) config_.token = "fuzz-token";
    config_.max_workers = (b1 / 54) % 2 ? 2 : 0;
    const int64_t batch = config_.workers + b2 % 14;
    config_.global_batch = batch;
    config_.batch_policy = (b2 / 14) % 2 ? "fixed" : "balanced";
    if ((b2 / 28) % 3 == 1) config_.worker_batches = {1, 2, 3};
    config_.overlap_rounds = (b2 / 84) % 2;
    const int64_t steps = 1 + b3 % 12;
    const int64_t samples = batch * (1 + (b3 / 12) % 3) + (b3 / 36) % batch;
    config_.eval_every = b4 % 3;
    config_.checkpoint_every = (b4 / 3) % 3;
    config_.optimizer.kind = (b4 / 9) % 2 ? "adam" : "sgd";
    config_.outer_lr = (b4 / 18) % 2 ? 0.7 : 1;
    // Every barrier but the threaded one finds its deadline past: no waits.
    config_.step_deadline_seconds = 0;
    config_.deadline_factor = 0;
    config_.deadline_floor_seconds = 0;
    plan_ = std::make_unique<mt::RunPlan>(samples, batch, 0, steps);
    master_ = std::make_unique<mt::MasterModel>(spec, config_.optimizer, compression, 1, 1, 1);
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
    c.set_step(v.a.step());
    c.set_offset(seg.begin);
    values_.resize(seg.size());
    const float size = scale * (1.0f + 0.01f * static_cast<float>(v.a.offset() % 7));
    for (size_t i = 0; i < values_.size(); ++i)
      values_[i] = size * std::cos(0.5f * static_cast<float>((seg.begin + i) % 64));
    if (master_->compression() == mt::Compression::kNone)
      c.mutable_values()->Add(values_.begin(), values_.end());
    else
      mt::EncodeFloats(master_->compression(), values_.data(), values_.size(), nullptr,
                       c.mutable_packed());
    if (k + 1 == master_->segments().size()) {
      const int batch = v.a.batch() * std::max(1, v.a.local_steps());
      c.set_last(true);
      c.set_batch(batch);
      c.set_loss_sum(2.3 * batch);
      c.set_compute_ms(1 + 0.1 * batch);
      if (v.a.step() % config_.digest_every == 0) c.set_weights_digest(digest_);
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

  // What a hostile or broken worker changes in a chunk (how's bits).
  void Mutate(proto::GradientChunk& c, uint8_t how) {
    const bool plain = master_->compression() == mt::Compression::kNone;
    if (how & 2) c.set_step(c.step() + static_cast<int8_t>(in_.U8()));
    if (how & 4) c.set_offset(in_.U8() & 1 ? in_.U64() : c.offset() + in_.U8() - 128);
    if (how & 8) {  // a few values replaced: non-finite, huge, tiny, any bits
      const float specials[] = {NAN, INFINITY, -INFINITY, FLT_MAX, -FLT_MAX, 1e30f, FLT_MIN / 4};
      for (int n = in_.U8() % 4; n > 0; --n) {
        const size_t at = in_.U16();
        const uint8_t kind = in_.U8();
        const float v = kind < 7 ? specials[kind] : in_.F32();
        if (plain && c.values_size() > 0)
          c.mutable_values()->Set(static_cast<int>(at % c.values_size()), v);
        else if (!plain && !c.packed().empty())
          (*c.mutable_packed())[at % c.packed().size()] = static_cast<char>(kind);
      }
    }
    if (how & 16) {  // the payload's length, or both forms of it
      switch (in_.U8() % 4) {
        case 0: c.clear_values(), c.clear_packed(); break;
        case 1: plain ? c.add_values(0.5f) : c.mutable_packed()->push_back('\x7f'); break;
        case 2:
          if (plain && c.values_size() > 0) c.mutable_values()->RemoveLast();
          if (!plain && !c.packed().empty()) c.mutable_packed()->pop_back();
          break;
        case 3: plain ? c.set_packed(in_.Str(16)) : c.add_values(in_.F32()); break;
      }
    }
    if (how & 32) c.set_last(!c.last());
    if (how & 64) {  // the step report
      const uint8_t which = in_.U8();
      const int32_t batches[] = {0, -1, INT_MAX, INT_MIN, c.batch() + 1, c.batch()};
      c.set_batch(which % 7 < 6 ? batches[which % 7] : static_cast<int32_t>(in_.U32()));
      if (which & 8) c.set_loss_sum(in_.F64());
      if (which & 16) c.set_compute_ms(in_.F64());
      if (which & 32) c.set_exchange_ms(in_.F64());
      if (which & 64) c.set_weights_digest(in_.U64());
      if (which & 128) c.clear_weights_digest();
    }
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
      round_steps = std::max(round_steps, v.a.local_steps());
      if (v.due) due.push_back({s.get(), Rest(v)});
    }
    config_.step_deadline_seconds = kThreadedDeadlineSeconds / round_steps;
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
    config_.step_deadline_seconds = 0;
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

// ---- Seeds: scripts written as the harness reads them (reversed). ----

class SeedWriter {
 public:
  SeedWriter& U8(uint8_t v) {
    bytes_.push_back(v);
    return *this;
  }
  SeedWriter& U64(uint64_t v) {  // most significant byte first, as it is read
    for (int i = 7; i >= 0; --i) U8(static_cast<uint8_t>(v >> (8 * i)));
    return *this;
  }
  SeedWriter& Act(Op op, uint8_t target = 0, uint8_t how = 0) { return U8(op).U8(target).U8(how); }
  SeedWriter& Workers(int n) {  // Join and Hello, honestly
    for (int i = 0; i < n; ++i) Act(kJoin, static_cast<uint8_t>(i));
    for (int i = 0; i < n; ++i) Act(kHello, static_cast<uint8_t>(i));
    return *this;
  }
  // All n send the whole gradient; threaded, the last one's comes while
  // the run thread waits at the barrier.
  SeedWriter& Step(int n, bool threaded = false) {
    Act(kPublish);
    for (int i = 0; i < (threaded ? n - 1 : n); ++i) Act(kGradient, static_cast<uint8_t>(i));
    return Act(threaded ? kThreaded : kBarrier);
  }
  void Write(const std::string& path) const {
    std::string out(bytes_.rbegin(), bytes_.rend());
    std::ofstream(path, std::ios::binary) << out;
  }

 private:
  std::vector<uint8_t> bytes_;
};

// Header bytes: b0 = model | compression << 1 (and aggregation, sync in
// its higher multiples, see Harness), b1 = workers - 1 + ..., b2 = batch
// extra, b3 = steps - 1 + ..., b4 = eval/checkpoint/optimizer.
SeedWriter Header(uint8_t b0, uint8_t b1, uint8_t b2 = 6, uint8_t b3 = 27, uint8_t b4 = 0) {
  SeedWriter w;
  w.U8(b0).U8(b1).U8(b2).U8(b3).U8(b4);
  return w;
}

void WriteSeeds(const std::string& dir) {
  std::filesystem::create_directories(dir);
  auto put = [&](const std::string& name, const SeedWriter& w) { w.Write(dir + "/" + name); };
  // b0: bit 0 the two-segment model; (b0 >> 1) = compression + 3 * aggregation + 12 * sync.
  const uint8_t two = 1, fp16 = 1 << 1, int8 = 2 << 1, mean = 3 << 1, sync2 = 24 << 1;
  SeedWriter w = Header(0, 0);
  w.Workers(1).Step(1).Step(1).Step(1).Step(1).Act(kFinish);
  put("one-worker", w);
  w = Header(two, 2);  // three workers, two segments, auto aggregation
  w.Workers(3).Step(3).Step(3, true).Step(3, true).Step(3);
  put("three-workers-threaded", w);
  w = Header(two | int8, 1);
  w.Workers(2).Step(2).Step(2, true).Step(2);
  put("int8-two-segments", w);
  w = Header(fp16 | mean | sync2, 1, 6, 31);
  w.Workers(2).Step(2).Step(2).Step(2, true);
  put("fp16-local-sgd", w);
  w = Header(0, 1);  // one is left out, comes back with its late gradient
  w.Workers(2).Act(kPublish).Act(kGradient, 0).Act(kBarrier).Act(kChunk, 1).Step(2);
  put("late-and-back", w);
  w = Header(0, 1);  // a NaN at position 1, then a non-finite loss
  w.Workers(2).Act(kPublish).Act(kChunk, 0, 8).U8(1).U8(0).U8(1).U8(0);
  w.Act(kGradient, 1).Act(kBarrier).Act(kJoin, 0).Act(kHello, 2).Act(kPublish);
  w.Act(kChunk, 1, 64).U8(12).U64(0x7ff8000000000000);
  w.Act(kGradient, 0).Act(kBarrier);
  put("non-finite", w);
  w = Header(two, 2);  // x FLT_MAX from one of three: refused mid-step
  w.Workers(3).Act(kPublish).Act(kGradient, 0).Act(kChunk, 1, 128).U8(3).Act(kGradient, 2);
  w.Act(kGradient, 1).Act(kBarrier).Step(2);
  put("flt-max", w);
  w = Header(0, 1);  // one leaves mid-step, its chunks still in flight
  w.Workers(2).Act(kPublish).Act(kLeave, 1).Act(kChunk, 1).Act(kGradient, 0).Act(kBarrier);
  w.Act(kClose, 1).Step(1);
  put("leave-mid-step", w);
  w = Header(0, 0);  // the stream breaks; the worker joins again
  w.Workers(1).Step(1).Act(kBreak, 0).Act(kPublish).Act(kClose, 0, 1).Act(kBarrier);
  w.Act(kJoin, 0).Act(kHello, 1).Step(1);
  put("rejoin", w);
  w = Header(0, 27);  // a token run: bad secret, wrong id, another's secret
  w.Act(kJoin, 0).Act(kJoin, 1).Act(kHello, 0, 2).U8(3).U8('a').U8('b').U8('c');
  w.Act(kHello, 0, 1).U8(0).U8(0).U8(0).U8(7).Act(kHello, 0, 4).U8(1);
  w.Act(kJoin, 2, 2).U8(0).Act(kHello, 0).Act(kHello, 1).Step(1).Act(kLeave, 0, 2).U8(0);
  put("bad-credentials", w);
  w = Header(0, 9 + 1);  // digests every step, one wrong: a resync
  w.Workers(2).Step(2).Act(kPublish).Act(kChunk, 0, 64).U8(68).U64(42);
  w.Act(kGradient, 1).Act(kBarrier).Step(2);
  put("digest", w);
  w = Header(two, 1);  // a stop at the barrier, then the end
  w.Workers(2).Act(kPublish).Act(kGradient, 0).Act(kStop).Act(kBarrier).Act(kPublish).Act(kFinish);
  put("stop", w);
  w = Header(0, 2);  // every worker's gradient is NaN: the model diverged
  w.Workers(3).Act(kPublish);
  for (int i = 0; i < 3; ++i) w.Act(kChunk, 0, 8).U8(1).U8(0).U8(0).U8(0);
  w.Act(kBarrier).Act(kPublish).Act(kFinish);
  put("diverged", w);
  // A whole run, most steps completed by the transport's thread, two
  // workers late now and then: long, so that inputs may grow long.
  w = Header(0, 2, 6, 11);
  w.Workers(3);
  for (int step = 0; step < 12; ++step) {
    if (step % 3 == 2)
      w.Act(kPublish).Act(kGradient, 0).Act(kBarrier).Act(kChunk, 1).Act(kChunk, 2);
    else
      w.Step(3, true);
  }
  put("long-run", w);
  // Local SGD, outer momentum 0.9: FLT_MAX changes two rounds running
  // overflowed the velocity, and the hub sent an infinite result (fixed).
  w = Header(144, 0);
  w.Workers(1);
  for (int i = 0; i < 3; ++i) w.Act(kPublish).Act(kChunk, 0, 128).U8(3).Act(kBarrier);
  w.Act(kPublish);
  put("outer-momentum-overflow", w);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);
  g_verbose = std::getenv("MT_FUZZ_VERBOSE") != nullptr;
  g_models[0] = new proto::ModelSpec(mt::ParseModelSpec(kTinyModel, "the fuzzer's tiny model"));
  g_models[1] = new proto::ModelSpec(mt::ParseModelSpec(kTwoSegmentModel, "the fuzzer's model"));
  if (const char* seeds = std::getenv("MT_FUZZ_WRITE_SEEDS")) {
    WriteSeeds(seeds);
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
