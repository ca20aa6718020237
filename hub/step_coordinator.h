// The synchronous step as a state machine, free of any transport. Events
// come in from the transport's threads (a worker joins, opens its stream,
// sends a gradient chunk, goes away, leaves; a stop is asked); messages go
// out through MessageEncoder and each worker's WorkerLink. The run thread
// drives steps in the order they happen:
//
//   PublishStep()   choose who takes part and their batches; send the plan,
//                   together with the previous step's averaged gradient (or
//                   the full state to a worker that needs it)
//   (the hub's own work while workers compute, e.g. evaluation)
//   (as gradient segments arrive, on the transport's threads: each segment
//    that every participant has delivered is averaged and, but for the
//    last, sent back at once, so the exchange overlaps the workers' backward)
//   CompleteStep()  wait at the barrier until every gradient is in or the
//                   deadline passes (latecomers are left out), average what
//                   is left weighted by batch, apply it to the master copy
//
// While the run thread waits in CompleteStep, the transport thread that
// brings a step's last gradient completes the step and publishes the next
// one itself: waking the run thread first would put a thread hand-off
// (~0.1 ms on small VMs) between every step. The run thread then finds the
// step done and the next published, and does its bookkeeping (progress,
// checkpoint, evaluation) while the workers compute; the master weights
// cannot change before it calls CompleteStep again.
//
// Tests drive it in-process with a fake transport (tests/hub/).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "core/trace/span.h"
#include "core/train/run_plan.h"
#include "hub.pb.h"
#include "hub/batch_controller.h"
#include "hub/hub_config.h"
#include "hub/hub_events.h"
#include "hub/hub_status.h"
#include "hub/master_model.h"
#include "hub/membership.h"
#include "hub/robust_aggregate.h"
#include "hub/run_metrics.h"
#include "hub/sync_period.h"
#include "hub/transport.h"
#include "model.pb.h"

namespace mt {

class HubTrace;

class StepCoordinator {
 public:
  using Clock = std::chrono::steady_clock;

  // `events` may be null.
  // `plan`: the run's length at the global batch (core/train/run_plan.h).
  StepCoordinator(const HubConfig& config, const proto::ModelSpec& spec, const RunPlan& plan,
                  MasterModel& master, MessageEncoder& encoder, RunMetrics& metrics,
                  HubEventSink* events);

  // ---- Events from the transport; thread-safe. ----
  HubStatus Join(const proto::JoinRequest& request, const std::string& peer,
                 proto::JoinReply* reply);
  // The first message on a worker's stream.
  HubStatus Hello(const proto::Hello& hello, WorkerLink* link, int* worker_id);
  // A refused chunk ends the stream: the transport closes it with the status.
  HubStatus Gradient(int worker_id, const proto::GradientChunk& chunk);
  // The stream is over (why.ok(): closed by the worker or broken). After
  // this returns nothing more is sent on its link.
  void StreamClosed(int worker_id, const HubStatus& why);
  HubStatus Leave(const proto::LeaveRequest& request);
  void RequestStop();
  bool stop_requested() const;

  // ---- The run thread. ----
  // Continue a resumed run at `step` (before the first step).
  void StartAt(int64_t step);
  // mthub --trace (hub/hub_trace.h), before the first Join: the step's
  // spans go there and workers are asked for theirs. Null: tracing off.
  void set_trace(HubTrace* trace) { trace_ = trace; }
  // The running statistics (batch norm) joining workers get: a copy taken
  // by the run thread after it recomputes them, so a Join never reads the
  // model while the run thread writes it.
  void PublishRunningStats(std::vector<float> stats);
  // Until --workers workers are ready; false when stopped first.
  bool WaitForWorkers();
  // False when stopped before the step could start.
  bool PublishStep();
  // Whether the step just published carried the previous step's result (so
  // the master weights are those of steps_done() steps).
  bool published_result() const { return published_result_; }
  // The hub's own work inside this step (evaluation) that the step's
  // deadline should not charge to the workers.
  void ExtendDeadline(Clock::duration d) { deadline_extension_ += d; }
  struct StepOutcome {
    bool stopped = false;  // stopped at the barrier; nothing applied
    int64_t samples = 0;   // in the average; 0: nobody finished, the step runs again
    int64_t steps = 1;     // steps the round covered (--sync-every)
    double loss_sum = 0;
    // For the live views (hub/monitor/): the run's payload totals when the
    // step closed, and how long the first whole gradient waited for the
    // step to close (for the slowest worker, or the deadline).
    int64_t gradient_bytes_in = 0, result_bytes_out = 0;
    double barrier_wait_seconds = 0;
  };
  // `next_may_follow`: the next step may be published as soon as this one
  // completes (the run is not ending).
  StepOutcome CompleteStep(bool next_may_follow = true);
  int64_t steps_done() const;
  // The master weights, read under the lock (for tests).
  std::vector<float> MasterWeights() const;
  // Every worker still here is told the run is over; later Joins hear so.
  void Finish(const std::string& reason, double test_accuracy);

  // The workers for the progress line: each one's batch and pace (past
  // kListedWorkers, the spread and the slowest), how many are left out, and
  // how often the split changed since the last call.
  static constexpr size_t kListedWorkers = 6;
  std::string ParticipantSummary();
  // Visits every worker under the lock (for reports).
  template <class Fn>
  void ForEachWorker(Fn&& fn) const {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& s : membership_.all()) fn(*s, controller_);
  }
  BatchPolicy batch_policy() const { return controller_.policy(); }
  // Set when the model has diverged: kDivergedAfter non-finite results for
  // the same step and none finite. The run then stops (stop_requested());
  // the master weights are not worth a checkpoint.
  static constexpr int kDivergedAfter = 3;
  // --aggregate auto with 3+ workers: a worker whose contributions' cosine
  // with the sum of the others', smoothed over steps, stays below
  // -kAlignmentBound after kAlignmentMinSteps steps is refused (a sign flip).
  static constexpr double kAlignmentSmoothing = 0.1;
  static constexpr int kAlignmentMinSteps = 10;
  static constexpr double kAlignmentBound = 0.2;
  std::string diverged() const;
  // Local steps per round now (--sync-every, or what auto chose last).
  int sync_every() const;

 private:
  void Emit(HubEvent::Kind kind, int worker = -1, std::string detail = {});
  // Where the hub's spans go; null when not tracing.
  trace::SpanSink* spans() const;
  // A worker's result was refused as non-finite (under the lock).
  void NoteNonFinite(const std::string& why);
  bool WaitForMinWorkers(std::unique_lock<std::mutex>& lock);
  // Until `needed` workers take part (false when stopped first); say_why
  // logs, every 10 s, how many there are.
  bool WaitForParticipants(std::unique_lock<std::mutex>& lock, int needed,
                           const std::function<void(int)>& say_why);
  // Steps in the round starting at step_: up to --sync-every, ending at the
  // epoch's end, before its shorter last step, and where an evaluation or a
  // checkpoint is due.
  int64_t RoundLength() const;
  void Assign(const std::vector<WorkerSlot*>& who);
  void RecordBatchChange(const std::vector<WorkerSlot*>& who, const std::vector<int>& batches);
  void Broadcast(const std::vector<WorkerSlot*>& who, bool with_result);
  void SendState(WorkerSlot* slot);
  double DeadlineSeconds(const std::vector<WorkerSlot*>& who) const;
  // False when stopped; true when all are in or the deadline passed.
  bool AwaitGradients(std::unique_lock<std::mutex>& lock);
  void LeaveOut(WorkerSlot* slot, double waited_seconds);
  // Late workers whose gradient is whole and whose quarantine is over
  // (hub/quarantine.h) wait for the next step again.
  void ReleaseQuarantined();
  // Averages every segment not yet averaged that each participant still in
  // the step has delivered, in order; sends all but the last segment's
  // result to them at once (the last goes with the next plan). Under the lock.
  void ReduceReadySegments();
  // Combines segment k of `from` (hub/robust_aggregate.h) and sends it on;
  // false when a contribution was refused (its worker is then dropped).
  bool ReduceSegment(size_t k, const std::vector<WorkerSlot*>& from);
  // --aggregate auto with 3+ workers: adds segment k's alignments to each
  // worker's step; at the last segment updates their running cosines and
  // refuses (false) a worker that keeps pulling against the others.
  bool CheckAlignment(size_t k, const std::vector<WorkerSlot*>& from);
  // Drops a worker whose contribution was refused, naming it and why.
  void Refuse(WorkerSlot* slot, const std::string& why);
  // Segment k of the average as a result chunk of `step`.
  void FillResult(size_t k, int64_t step, int64_t local_steps, proto::StepResult* r);
  static int64_t ResultPayload(const proto::StepResult& r);
  // Who finished the step: their samples and loss, their times for the batch
  // controller, their digests checked.
  StepOutcome Tally();
  // Under the lock: the step's participants take part (their assignments,
  // who gets the full state); `digest_now`: hash the master weights for
  // the digest check now (else the caller does, once they are final).
  void BeginStep(const std::vector<WorkerSlot*>& who, bool digest_now = true);
  // Under the lock, after the barrier: averages what is left, applies it
  // to the master copy, moves to the next step (CloseStep, ApplyToMaster).
  StepOutcome FinishStep();
  StepOutcome CloseStep();
  void ApplyToMaster();
  // Under the lock, from the transport thread that brought a gradient:
  // completes the step and publishes the next one when the run thread
  // armed it and nothing needs the run thread (see the class comment).
  void AdvanceIfComplete();
  // Times of a round everyone finished: the adaptive deadline's pace and
  // what --sync-every auto decides on.
  void ObserveRound();

  const HubConfig& config_;
  const proto::ModelSpec& spec_;
  const RunPlan plan_;
  MasterModel& master_;
  MessageEncoder& encoder_;
  RunMetrics& metrics_;
  HubEventSink* events_;
  HubTrace* trace_ = nullptr;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<float> running_stats_;  // what Join sends (guarded by mu_)
  Membership membership_;
  BatchController controller_;
  SyncPeriod sync_;
  bool stop_ = false;
  bool finished_ = false;
  // Workers' results refused as non-finite since the last applied step.
  int non_finite_refusals_ = 0;
  std::string diverged_;
  int64_t step_ = 0;

  // The step in progress.
  std::vector<WorkerSlot*> round_;  // its participants
  Clock::time_point published_at_;
  Clock::duration deadline_extension_{};
  bool published_result_ = false;
  // Whether the master holds an applied average the workers have not had:
  // false at the start, after a step nobody finished, or when everyone left.
  bool have_result_ = false;
  int64_t average_step_ = -1;
  int64_t round_steps_ = 1;    // of the round in progress
  bool round_local_ = false;   // whether it sends weight changes (local SGD)
  int64_t average_steps_ = 1;  // of the round whose average the master holds
  bool average_local_ = false;
  double last_loss_ = 0;
  uint64_t digest_before_ = 0;   // master weights' digest when the step began
  double step_seconds_ema_ = 0;  // recent time per step (a round's over its steps), for deadlines
  size_t reduced_segments_ = 0;  // of the step in progress, averaged (and sent)
  // A contribution to the step in progress was refused after some of its
  // segments went out: the step is not applied but runs again.
  bool step_refused_ = false;
  // The transport's fast path (AdvanceIfComplete): armed by the run thread
  // while it waits; done and published tell it what happened meanwhile.
  bool advance_armed_ = false;
  bool advanced_ = false;
  bool published_ahead_ = false;
  StepOutcome advanced_outcome_;
  RobustAggregator aggregator_;
  // Reused by every reduction, so a steady step allocates nothing here.
  std::vector<WorkerSlot*> reduce_from_;
  std::vector<const float*> reduce_gradients_;
  std::vector<float> reduce_weights_;
  int64_t batch_changes_summarised_ = 0;  // ParticipantSummary's last count
};

}  // namespace mt
