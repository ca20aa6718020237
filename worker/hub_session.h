// One session of a worker with the hub: from the Train stream's Hello to
// the hub's goodbye, a broken stream or this worker leaving. It applies the
// hub's state and results to the local trainer (which outlives sessions),
// computes each planned step on its share, and streams the gradient back.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/compress/gradient_codec.h"
#include "core/train/step_history.h"
#include "core/util/event_file.h"
#include "hub.pb.h"
#include "worker/device_state.h"
#include "worker/gradient_sender.h"
#include "worker/hub_link.h"
#include "worker/hub_protocol_error.h"
#include "worker/local_trainer.h"
#include "worker/lookahead.h"
#include "worker/private_update.h"
#include "worker/secure_update.h"
#include "worker/slowdown_pacer.h"
#include "worker/worker_config.h"
#include "worker/worker_control.h"

namespace mt {

class WorkerTrace;

// What the worker did over all its sessions with the hub: a reconnect
// starts a new session but the report covers the whole run.
struct WorkerTotals {
  int64_t steps = 0, samples = 0, resyncs = 0, steps_left_out = 0, reconnects = 0;
  // Local SGD with overlap: steps taken while a round's exchange travelled.
  int64_t steps_ahead = 0;
  double compute_seconds = 0, last_mean_loss = -1, hub_accuracy = -1;
  // Per step: loss, compute time and batch, downsampled (the report's history).
  StepHistory history;
  // mthub --partition: the samples per class of this worker's own share,
  // as it picked them (the report's partition_share).
  std::vector<uint32_t> share_classes;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
};

class HubSession {
 public:
  // `link`: the gRPC stream, or in tests and the fuzzer a (hostile) hub
  // played in memory. `events` (may be null) gets what happens, as
  // --events lines.
  HubSession(const WorkerConfig& cfg, const proto::JoinReply& join, HubLink& link,
             LocalTrainer& trainer, WorkerTotals& totals, WorkerControl& control,
             EventFile* events);

  enum class Outcome { kGoodbye, kBroken, kLeave };

  // Until the hub says goodbye, the stream breaks, or this worker should
  // leave (stopped, or its device policy says so: leave_reason()).
  Outcome Run();
  const std::string& leave_reason() const { return leave_reason_; }
  // Secure aggregation (JoinReply.secure_aggregation): the box key its
  // Hello carries; empty when the hub does not run it.
  std::string secagg_box_key() const { return secure_ ? secure_->box_key() : ""; }
  // --trace, or the hub's JoinReply.trace (worker/worker_trace.h; null:
  // off): before Run.
  void set_trace(WorkerTrace* trace);

 private:
  // Copies a chunk's values to `into` + offset, within `limit` floats.
  void Stage(uint64_t offset, const google::protobuf::RepeatedField<float>& values, size_t limit,
             float* into);
  bool TakeState(const proto::StateChunk& s);
  // Secure aggregation's holders and unmasking requests, answered at once.
  void TakeSecure(const proto::HubMessage& m);
  // Result chunks come one per segment, in the segments' order; the last
  // one completes the result and is applied.
  bool TakeResult(const proto::StepResult& r);
  // Trains on this worker's share of the planned step, if it has one.
  void Follow(const proto::StepPlan& plan);
  // This worker's `batch` samples at `offset` of the epoch's order (or of
  // its own files' order) into indices_.
  void FillIndices(int64_t epoch, int64_t offset, int batch);
  // The next `batch` samples of this worker's own shuffle of its files.
  void FillOwn(int batch);
  void Compute(const proto::Assignment& a);
  // Throws unless the assignment is one this worker can carry out: a batch
  // it has room for, a bounded number of local steps, positions and a
  // stride its arithmetic cannot overflow on.
  void CheckAssignment(const proto::Assignment& a) const;
  // Local SGD: a.local_steps() optimizer steps here, then the change of the
  // weights over them goes to the hub (in place of a gradient).
  void ComputeRound(const proto::Assignment& a);
  // Where a step's gradient goes: to the hub as it is computed (a step of
  // its own), into the optimizer here (a round's local step), or the same
  // a step ahead, which past the epoch's end takes this worker's own samples.
  enum class StepMode { kExchanged, kLocal, kAhead };
  // The body of every step: step a.step() + k on its samples and dropout in
  // the per-step mode (offset a.offset() + k * a.stride()). Returns the
  // loss sum.
  double Step(const proto::Assignment& a, int64_t k, StepMode mode);
  // On the lookahead's thread: step k after the round ahead_of_, on the
  // samples that step would have in the next round if its plan matches
  // this one (own samples past the epoch's end).
  void StepAhead(int k);
  // The hub's next message is no round result: steps taken ahead are lost
  // (a state replaces the weights; a worker left out gets one next).
  void DiscardAhead();
  // The rest of the gradient (or a round's change) of the step the sender
  // began, with its report.
  // Differential privacy on the exchanged floats of `v` (worker/private_update.h).
  void MakePrivate(float* v);
  void FinishGradient(int samples, double loss, double ms, bool digest, uint64_t weights_digest);
  // A step (or a round of `steps`) into totals_.history.
  void RecordHistory(int64_t step, int steps, int batch, int samples, double loss, double ms);
  // The device's state, pushed by the embedder or read from /sys at most
  // every few seconds (reading it costs file opens; it changes slowly).
  const DeviceState& Device();

  using Clock = std::chrono::steady_clock;
  const WorkerConfig& cfg_;
  const proto::JoinReply& join_;
  HubLink& link_;
  LocalTrainer& trainer_;
  WorkerTotals& totals_;
  WorkerControl& control_;
  EventFile* events_;
  WorkerTrace* trace_ = nullptr;
  DeviceState device_;
  Clock::time_point next_device_read_ = Clock::now();
  std::string leave_reason_;
  bool local_ = false;
  std::vector<uint32_t> indices_, order_, local_order_;
  std::vector<uint32_t> own_;  // mthub --partition: this worker's samples
  int64_t order_epoch_ = -1, local_pass_ = 0;
  size_t local_cursor_ = 0;
  std::vector<float> staging_;
  std::vector<float> round_start_;  // the weights a local-SGD round started from
  GradientSender sender_;
  // mthub --dp-clip: what the update goes through before it leaves.
  PrivateUpdate private_;
  std::unique_ptr<SecureUpdate> secure_;     // null: the hub does not run secure aggregation
  std::vector<SegmentCodec> result_codecs_;  // per segment, decoding the hub's results
  SlowdownPacer pacer_;                      // --slowdown
  double pace_mark_ = 0;    // compute since here (pacer_.Now()) is not yet paid for
  size_t result_next_ = 0;  // the result segment expected next
  int64_t steps_ = 0;       // in this session
  Clock::time_point last_log_ = Clock::now();
  // The exchange as this worker sees it: from its gradient or change
  // leaving to the hub's next message arriving (GradientChunk.exchange_ms).
  Clock::time_point sent_at_;
  bool awaiting_ = false;
  double exchange_ms_ = 0;
  // Local SGD with overlap (JoinReply.overlap_rounds): steps taken ahead
  // while a round's change travels, and what they cost.
  proto::Assignment ahead_of_;
  int ahead_steps_ = 0;  // taken since the last change left
  int round_ahead_ = 0;  // moved onto the average: the next round's first steps
  double ahead_seconds_ = 0, ahead_loss_ = 0;
  std::vector<float> sent_weights_;  // the weights when the round's change left
  // mthub --drift-correction (core/train/local_sgd.h, UpdateDrift): the
  // correction each local step adds, and this worker's change over its last
  // round (`own_steps_` steps) until the round's average comes.
  std::vector<float> drift_, own_change_;
  int own_steps_ = 0;
  // round_start_ holds the averaged weights of the last round, the next
  // one's anchor (the weights themselves may be ahead of them).
  bool anchored_ = false;
  // Last, so it stops (and joins its thread) before anything it uses goes.
  Lookahead lookahead_{[this](int k) { StepAhead(k); }};
};

}  // namespace mt
