// The synchronous step as a state machine, free of any transport. Events
// come in from the transport's threads (a worker joins, opens its stream,
// sends a gradient chunk, goes away, leaves; a stop is asked); messages go
// out, built by StepMessages and encoded by the transport's MessageEncoder,
// through each worker's WorkerLink. The run thread drives steps in the
// order they happen:
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
// The coordinator itself only orchestrates, under one lock and condition
// variable: the round's arithmetic is hub/round/ (the segment reduction and
// the alignment watch over float spans, the round's state), who is in the
// run and who sits out is the roster (hub/coordinator/worker_roster.h, over
// hub/membership/) with hub/policy/step_deadline.h, the batch split
// hub/policy/batch_controller.h, and the messages are built by
// hub/coordinator/step_messages.h.
//
// Tests drive it in-process with a fake transport (tests/hub/).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/trace/span.h"
#include "core/train/run_plan.h"
#include "hub.pb.h"
#include "hub/aggregation/dp_aggregate.h"
#include "hub/aggregation/master_model.h"
#include "hub/coordinator/step_messages.h"
#include "hub/coordinator/worker_roster.h"
#include "hub/hub_config.h"
#include "hub/policy/batch_controller.h"
#include "hub/policy/exchange_policy.h"
#include "hub/policy/step_deadline.h"
#include "hub/report/hub_events.h"
#include "hub/report/run_metrics.h"
#include "hub/round/fast_path.h"
#include "hub/round/round_outcome.h"
#include "hub/round/round_state.h"
#include "hub/round/segment_reducer.h"
#include "hub/secagg/secure_rounds.h"
#include "hub/transport/hub_status.h"
#include "hub/transport/transport.h"
#include "model.pb.h"

namespace mt {

class HubTrace;

class StepCoordinator {
 public:
  using Clock = std::chrono::steady_clock;

  // `events` may be null.
  // `plan`: the run's length at the global batch (core/train/run_plan.h);
  // the hub's own, which SetGlobalBatch replans.
  StepCoordinator(const HubConfig& config, const proto::ModelSpec& spec, RunPlan& plan,
                  MasterModel& master, MessageEncoder& encoder, RunMetrics& metrics,
                  HubEventSink* events);

  // ---- Events from the transport; thread-safe. ----
  // `identity`: what the transport proved of the peer (the fingerprint of
  // its mutual-TLS client certificate), empty when nothing (hub/membership/identity_bans.h).
  HubStatus Join(const proto::JoinRequest& request, const std::string& peer,
                 proto::JoinReply* reply, const std::string& identity = "");
  // The first message on a worker's stream.
  HubStatus Hello(const proto::Hello& hello, WorkerLink* link, int* worker_id);
  // A refused chunk ends the stream: the transport closes it with the status.
  HubStatus Gradient(int worker_id, const proto::GradientChunk& chunk);
  // The stream is over (why.ok(): closed by the worker or broken). After
  // this returns nothing more is sent on its link.
  void StreamClosed(int worker_id, const HubStatus& why);
  HubStatus Leave(const proto::LeaveRequest& request);
  // mthub --secure-aggregation: a worker's bundle or revealed shares.
  HubStatus SecureMessage(int worker_id, const proto::WorkerMessage& message);
  void RequestStop();
  bool stop_requested() const;
  // --dp-clip: the privacy spent so far (its counters are safe from any thread).
  const DpAggregate& privacy() const { return dp_; }

  // ---- The run thread. ----
  // Continue a resumed run at `step` (before the first step).
  void StartAt(int64_t step);
  // mthub --trace (hub/report/hub_trace.h), before the first Join: the step's
  // spans go there and workers are asked for theirs. Null: tracing off.
  void set_trace(HubTrace* trace) {
    trace_ = trace;
    roster_.set_trace(trace);
  }
  // The running statistics (batch norm) joining workers get: a copy taken
  // by the run thread after it recomputes them, so a Join never reads the
  // model while the run thread writes it.
  void PublishRunningStats(std::vector<float> stats);
  // --partition: what each worker's JoinReply gives it to train on (by
  // worker id modulo the shares). Before Start.
  void SetPartition(std::vector<ClassShare> shares);
  // Until --workers workers are ready; false when stopped first.
  bool WaitForWorkers();
  // The global batch that follows the ready workers' own timings
  // (BatchController::FollowingTotal), 0 while one has not sent any;
  // `timings` gets them for the log ("worker 1 0.31 ms, ...").
  int FollowingBatch(int per_worker, std::string* timings) const;
  // Before the first step: the run's steps are counted in `batch` from now.
  void SetGlobalBatch(int64_t batch);
  // False when stopped before the step could start.
  bool PublishStep();
  // Whether the step just published carried the previous step's result (so
  // the master weights are those of steps_done() steps).
  bool published_result() const { return state_.published_result; }
  // The hub's own work inside this step (evaluation) that the step's
  // deadline should not charge to the workers.
  void ExtendDeadline(Clock::duration d) { deadline_.Extend(d); }
  using StepOutcome = RoundOutcome;  // hub/round/round_outcome.h
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
    for (const auto& [id, s] : roster_.membership().all()) fn(*s, controller_);
  }
  // What is kept of workers gone for good (hub/membership/departed_workers.h).
  DepartedWorkers departed() const;
  BatchPolicy batch_policy() const { return controller_.policy(); }
  // Set when the model has diverged: kDivergedAfter non-finite results for
  // the same step and no worker left in it. The run then stops (stop_requested());
  // the master weights are not worth a checkpoint.
  static constexpr int kDivergedAfter = RoundState::kDivergedAfter;
  // --aggregate auto with 3+ workers: a worker whose contributions' cosine
  // with the sum of the others', smoothed over steps, stays below
  // -kAlignmentBound after kAlignmentMinSteps steps is refused (a sign flip;
  // hub/round/alignment_watch.h).
  static constexpr double kAlignmentSmoothing = AlignmentWatch::kSmoothing;
  static constexpr int kAlignmentMinSteps = AlignmentWatch::kMinSteps;
  static constexpr double kAlignmentBound = AlignmentWatch::kBound;
  std::string diverged() const;
  // Local steps per round now (--sync-every, or what auto chose last).
  int sync_every() const;
  // The encoding rounds use now (--compress, or what auto chose last).
  Compression compression() const;

 private:
  // ---- Events (step_coordinator_membership.cc; the roster decides) ----
  // A worker's result was refused as non-finite (under the lock).
  void NoteNonFinite(const WorkerSlot* refused, const std::string& why);
  bool WaitForMinWorkers(std::unique_lock<std::mutex>& lock);
  // Until `needed` workers take part (false when stopped first); say_why
  // logs, every 10 s, how many there are.
  bool WaitForParticipants(std::unique_lock<std::mutex>& lock, int needed,
                           const std::function<void(int)>& say_why);

  // ---- The round (step_coordinator_round.cc) ----
  // Where the hub's spans go; null when not tracing.
  trace::SpanSink* spans() const;
  // Steps in the round starting at the current step: up to --sync-every,
  // ending at the epoch's end, before its shorter last step, and where a
  // checkpoint is due (evaluations wait for the round's end).
  int64_t RoundLength() const;
  void Assign(const std::vector<WorkerSlot*>& who);
  void RecordBatchChange(const std::vector<WorkerSlot*>& who, const std::vector<int>& batches);
  void Broadcast(const std::vector<WorkerSlot*>& who, bool with_result);
  // Who finished the step: their samples and loss, their times for the batch
  // controller, their digests checked.
  StepOutcome Tally();
  // Times of a round everyone finished: the adaptive deadline's pace and
  // what --sync-every auto decides on.
  void ObserveRound();
  void RecordCompressionChange(Compression from);

  // ---- The reduction (step_coordinator_reduce.cc) ----
  // Hands the reducer (hub/round/segment_reducer.h) every segment that each
  // participant still in the step has delivered, in order; sends all but
  // the last segment's result to them at once (the last goes with the next
  // plan). Under the lock.
  void ReduceReadySegments();
  // Combines the reducer's next segment and sends it on; false when a
  // contribution was refused (its worker is then dropped).
  bool ReduceSegment();
  // The worker of the reducer's input i.
  WorkerSlot* InputSlot(int i) const;

  // ---- Secure aggregation (step_coordinator_secure.cc); all under the lock ----
  // How long survivors have to reveal their shares after a round.
  static constexpr int kUnmaskSeconds = 30;
  // The participants that can take the next round: all of them, or with
  // secure aggregation those whose bundles cover each other (none when
  // fewer than the threshold).
  std::vector<WorkerSlot*> Takers() const;
  // After a Hello: its box key, and the new holders to everyone.
  HubStatus SecureHello(const proto::Hello& hello, int worker_id);
  // The round's members into the plan.
  void BeginSecureRound(const std::vector<WorkerSlot*>& who);
  // After the barrier: the unmasking exchange; each survivor's inbox then
  // holds the average. False when the run stops (then why is logged).
  bool UnmaskRound(std::unique_lock<std::mutex>& lock);
  bool SecureFailure(const std::string& why);

  // ---- The step cycle (step_coordinator.cc) ----
  // Of the workers present, those that take part in the next round
  // (hub/policy/attendance.h): all, but a device that would make the round
  // slower than it is without it, where the workers share one data order.
  std::vector<WorkerSlot*> Attend(std::vector<WorkerSlot*> present);
  // Under the lock: the step's participants take part (their assignments,
  // who gets the full state); `digest_now`: hash the master weights for
  // the digest check now (else the caller does, once they are final).
  void BeginStep(const std::vector<WorkerSlot*>& who, bool digest_now = true);
  // False when stopped; true when all are in or the deadline passed.
  bool AwaitGradients(std::unique_lock<std::mutex>& lock);
  // Under the lock, after the barrier: averages what is left, applies it
  // to the master copy, moves to the next step (CloseStep, ApplyToMaster).
  StepOutcome FinishStep();
  StepOutcome CloseStep();
  void ApplyToMaster();
  // Under the lock, from the transport thread that brought a gradient:
  // completes the step and publishes the next one when the run thread
  // armed it and nothing needs the run thread (see the class comment).
  void AdvanceIfComplete();

  const HubConfig& config_;
  RunPlan& plan_;  // written under mu_ (SetGlobalBatch), on the run thread
  MasterModel& master_;
  ExchangePolicy exchange_;  // --sync-every and --compress: the one owner of both
  StepMessages messages_;
  RunMetrics& metrics_;
  HubTrace* trace_ = nullptr;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  StepDeadline deadline_;
  BatchController controller_;
  Attendance attendance_;
  std::vector<WorkerSlot*> round_;  // the participants of the step in progress
  RoundState state_;
  WorkerRoster roster_;  // who is in the run; closed once the run has finished
  SegmentReducer reducer_;
  DpAggregate dp_;  // --dp-clip: the noise on the combination and its accountant
  FastPath fast_;
  std::unique_ptr<SecureRounds> secure_;  // mthub --secure-aggregation; null: off
  int64_t batch_changes_summarised_ = 0;  // ParticipantSummary's last count
};

}  // namespace mt
