// The coordinator's side of who is in the run: joins, streams opening and
// closing, late gradients coming back, leaving, leave-outs at the deadline,
// quarantine, refusals and bans. The rules themselves are
// hub/membership/membership.h and hub/membership/quarantine.h; the roster
// logs, emits events and tells the workers. Not thread-safe: the step
// coordinator calls it under its lock, and wakes its waiters itself.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "core/train/run_plan.h"
#include "hub.pb.h"
#include "hub/aggregation/master_model.h"
#include "hub/coordinator/step_messages.h"
#include "hub/hub_config.h"
#include "hub/membership/membership.h"
#include "hub/policy/attendance.h"
#include "hub/policy/batch_controller.h"
#include "hub/report/hub_events.h"
#include "hub/report/run_metrics.h"
#include "hub/round/round_state.h"
#include "hub/transport/hub_status.h"

namespace mt {

class HubTrace;

class WorkerRoster {
 public:
  using Clock = std::chrono::steady_clock;

  // `state`: the round in progress, whose step events and messages name;
  // `round`: its participants, whose slots are never freed under them;
  // `events` may be null.
  // Who may join a run of `config` and `plan` on `master`'s model.
  static AdmissionRules RulesOf(const HubConfig& config, const RunPlan& plan,
                                const MasterModel& master);

  WorkerRoster(AdmissionRules rules, BatchController& controller, Attendance& attendance,
               StepMessages& messages, RunMetrics& metrics, HubEventSink* events,
               const RoundState& state, const std::vector<WorkerSlot*>& round);

  Membership& membership() { return membership_; }
  const Membership& membership() const { return membership_; }
  void set_trace(HubTrace* trace) { trace_ = trace; }

  void Emit(HubEvent::Kind kind, int worker = -1, std::string detail = {});

  // ---- Events from the transport. ----
  HubStatus Join(const proto::JoinRequest& request, const std::string& peer,
                 proto::JoinReply* reply, const std::string& identity);
  HubStatus Hello(const proto::Hello& hello, WorkerLink* link, int* worker_id);
  // The stream of `slot` is over (why.ok(): closed by the worker or broken).
  void StreamClosed(WorkerSlot* slot, const HubStatus& why);
  // `*slot`: the worker that leaves (nothing when refused).
  HubStatus Leave(const proto::LeaveRequest& request, WorkerSlot** slot);

  // A gradient chunk from `slot` into its inbox. `counts`: an active
  // worker's chunk, accepted for the step; a late worker's whole gradient
  // brings it back (`came_back`, NoteBack), a leaving one's counts for
  // nothing. Refused: the status says why; a non-finite one
  // (`non_finite`) bans its identity, and `others_in_round` counts the
  // round's other participants still in it (computing or done).
  // `arrived_us`: for --trace.
  struct Delivery {
    HubStatus status;
    bool counts = false, came_back = false, non_finite = false;
    int others_in_round = 0;
  };
  Delivery Deliver(WorkerSlot& slot, const proto::GradientChunk& chunk, int64_t arrived_us);

  // The global batch that follows the participants' own timings
  // (BatchController::FollowingTotal); `timings` gets them for the log.
  int FollowingBatch(int per_worker, std::string* timings) const;

  // ---- Decisions of the step cycle. ----
  // A late worker's gradient is whole: it may come back (after its
  // quarantine, hub/membership/quarantine.h).
  void NoteBack(WorkerSlot* slot);
  // Late workers whose gradient is whole and whose quarantine is over
  // wait for the next step again.
  void ReleaseQuarantined();
  // Missed the deadline after `waited_seconds`: the step goes on without it.
  void LeaveOut(WorkerSlot* slot, double waited_seconds);
  // Drops a worker whose contribution was refused, naming it and why.
  void Refuse(WorkerSlot* slot, const std::string& why);
  // Its identity, if it has one, may not join again this run.
  void BanIdentity(const WorkerSlot& slot, const std::string& why);
  // Attendance's verdicts: out of the rounds (told, so it drops any steps
  // it took ahead and waits), or in again (with the full model).
  void SetAside(WorkerSlot* slot);
  void BringBack(WorkerSlot* slot);
  // Frees the slots of workers gone for good (Membership::FreeDeparted) but
  // the step's participants, and none once the run has finished.
  void FreeDeparted();
  // Every Join from now on hears the run is over.
  void Close() { membership_.Close(); }
  bool closed() const { return membership_.closed(); }

 private:
  Membership membership_;
  BatchController& controller_;
  Attendance& attendance_;
  StepMessages& messages_;
  RunMetrics& metrics_;
  HubEventSink* events_;
  const RoundState& state_;
  const std::vector<WorkerSlot*>& round_;
  HubTrace* trace_ = nullptr;
};

}  // namespace mt
