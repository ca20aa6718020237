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
// variable. Its parts share a RoundContext (round_context.h): the round's
// plan (round_planner.h), its tally and times (round_tally.h), the
// reduction (round_reduction.h over hub/round/), secure aggregation
// (secure_round.h), who is in the run (worker_roster.h, over
// hub/membership/), the messages (step_messages.h). Tests drive it
// in-process with a fake transport (tests/hub/).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hub/coordinator/participant_summary.h"
#include "hub/coordinator/round_context.h"
#include "hub/coordinator/round_planner.h"
#include "hub/coordinator/round_reduction.h"
#include "hub/coordinator/round_tally.h"
#include "hub/coordinator/secure_round.h"
#include "hub/policy/step_deadline.h"
#include "hub/round/fast_path.h"
#include "hub/round/round_outcome.h"
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
  bool stop_requested() const {
    return Locked([&] { return stop_; });
  }
  // --dp-clip: the privacy spent so far (its counters are safe from any thread).
  const DpAggregate& privacy() const { return reduction_.dp(); }

  // ---- The run thread. ----
  // Continue a resumed run at `step` (before the first step).
  void StartAt(int64_t step);
  // mthub --trace (hub/report/hub_trace.h), before the first Join: the step's
  // spans go there and workers are asked for theirs. Null: tracing off.
  void set_trace(HubTrace* trace);
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
  int64_t steps_done() const {
    return Locked([&] { return state_.step; });
  }
  // The master weights, read under the lock (for tests).
  std::vector<float> MasterWeights() const {
    return Locked([&] { return master_.Weights(); });
  }
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
  // Why the run stopped as diverged (kDivergedAfter non-finite results for
  // the same step and no worker left in it, hub/round/round_state.h), or
  // secure aggregation failed; empty: it did not. The master weights are
  // then not worth a checkpoint.
  std::string diverged() const {
    return Locked([&] { return state_.diverged; });
  }
  // Local steps per round now (--sync-every, or what auto chose last).
  int sync_every() const {
    return Locked([&] { return exchange_.sync.steps(); });
  }
  // The encoding rounds use now (--compress, or what auto chose last).
  Compression compression() const {
    return Locked([&] { return exchange_.compression.current(); });
  }

 private:
  // ---- Events (step_coordinator_events.cc; the roster decides) ----
  // Until `needed` workers could take a round (participant_wait.h).
  bool WaitForParticipants(std::unique_lock<std::mutex>& lock, int needed,
                           const std::function<void(int)>& say_why);
  // The reduction goes on as far as the segments in allow (RoundReduction).
  void ReduceReadySegments();

  // ---- The step cycle (step_coordinator.cc), all under the lock ----
  // The participants that can take the next round: all of them, or with
  // secure aggregation those whose bundles cover each other.
  std::vector<WorkerSlot*> Takers() const;
  // The step's participants take part (their assignments, who gets the
  // full state); `digest_now`: hash the master weights for the digest
  // check now (else the caller does, once they are final).
  void BeginStep(const std::vector<WorkerSlot*>& who, bool digest_now = true);
  template <class Fn>
  auto Locked(Fn&& fn) const -> decltype(fn()) {
    std::lock_guard<std::mutex> lock(mu_);
    return fn();
  }
  // False when stopped; true when all are in or the deadline passed.
  bool AwaitGradients(std::unique_lock<std::mutex>& lock);
  // With secure aggregation, the unmasking exchange after the barrier;
  // false when the run stops (then why is logged).
  bool UnmaskRound(std::unique_lock<std::mutex>& lock);
  // The run stops as state_.diverged says.
  void StopDiverged();
  // After the barrier: averages what is left and closes the round
  // (RoundTally::Close); the caller applies the result to the master copy.
  StepOutcome CloseStep();
  void ApplyToMaster();
  // From the transport thread that brought a gradient: completes the step
  // and publishes the next one when the run thread armed it and nothing
  // needs the run thread (see the class comment).
  void AdvanceIfComplete();

  const HubConfig& config_;
  RunPlan& plan_;
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
  RoundContext context_;
  RoundPlanner planner_;
  RoundTally tally_;
  RoundReduction reduction_;
  FastPath fast_;
  std::unique_ptr<SecureRound> secure_;  // mthub --secure-aggregation; null: off
  ProgressSummary summary_;
};

}  // namespace mt
