// The coordinator's events from the transport: each takes the lock, hands
// who-is-in-the-run to the roster (hub/coordinator/worker_roster.h) and
// secure aggregation's messages to secure_round.h, and does what the step
// needs of it: the reduction goes on as segments arrive and without a
// worker that left, and waiters wake. Also the waits for enough workers.
#include <spdlog/spdlog.h>

#include "core/util/seconds.h"
#include "hub/coordinator/participant_wait.h"
#include "hub/coordinator/step_coordinator.h"
#include "hub/membership/churn_log.h"
#include "hub/report/hub_trace.h"

namespace mt {

using Code = HubStatus::Code;

HubStatus StepCoordinator::Join(const proto::JoinRequest& req, const std::string& peer,
                                proto::JoinReply* reply, const std::string& identity) {
  std::lock_guard<std::mutex> lock(mu_);
  if (secure_)
    if (HubStatus s = secure_->CheckJoin(req); !s.ok()) return s;
  return roster_.Join(req, peer, reply, identity);
}

HubStatus StepCoordinator::Hello(const proto::Hello& hello, WorkerLink* link, int* worker_id) {
  std::lock_guard<std::mutex> lock(mu_);
  HubStatus s = roster_.Hello(hello, link, worker_id);
  if (s.ok() && secure_) s = secure_->OnHello(hello, *worker_id);
  if (s.ok()) cv_.notify_all();
  return s;
}

HubStatus StepCoordinator::Gradient(int worker_id, const proto::GradientChunk& chunk) {
  const int64_t arrived_us = trace_ ? trace::NowMicros() : 0;
  std::lock_guard<std::mutex> lock(mu_);
  WorkerSlot* slot = roster_.membership().Find(worker_id);
  if (!slot)
    return HubStatus::Error(Code::kNotFound, "unknown worker id " + std::to_string(worker_id));
  const WorkerRoster::Delivery delivered = roster_.Deliver(*slot, chunk, arrived_us);
  if (delivered.came_back) cv_.notify_all();
  // Every worker that tried the step failed the same way: the weights they
  // all start from are what is broken (RoundState::NoteNonFinite).
  if (delivered.non_finite &&
      state_.NoteNonFinite(delivered.status.message, delivered.others_in_round))
    StopDiverged();
  if (!delivered.counts) return delivered.status;
  if (slot->inbox.complete()) cv_.notify_all();
  ReduceReadySegments();
  if (slot->inbox.complete()) AdvanceIfComplete();
  return HubStatus::Ok();
}

HubStatus StepCoordinator::SecureMessage(int worker_id, const proto::WorkerMessage& m) {
  std::lock_guard<std::mutex> lock(mu_);
  WorkerSlot* slot = roster_.membership().Find(worker_id);
  if (!slot)
    return HubStatus::Error(Code::kNotFound, "unknown worker id " + std::to_string(worker_id));
  if (!secure_)
    return HubStatus::Error(Code::kInvalidArgument,
                            "secure aggregation message to a hub that does not run it");
  if (slot->state == WorkerSlot::State::kGone) return HubStatus::Ok();
  HubStatus s = secure_->OnMessage(*slot, m);
  if (s.ok()) cv_.notify_all();
  return s;
}

void StepCoordinator::ReduceReadySegments() {
  // A stopped step is never completed, and nothing follows a goodbye.
  if (stop_ || roster_.closed() || reduction_.reducer().step_refused()) return;
  // Masked updates are reduced once unmasked (UnmaskRound), not before.
  if (secure_ && secure_->in_round()) return;
  if (reduction_.ReduceReady()) cv_.notify_all();
}

void StepCoordinator::StreamClosed(int worker_id, const HubStatus& why) {
  std::lock_guard<std::mutex> lock(mu_);
  WorkerSlot* slot = roster_.membership().Find(worker_id);
  if (!slot) return;
  roster_.StreamClosed(slot, why);
  if (secure_) secure_->Forget(worker_id);
  ReduceReadySegments();  // the others' segments no longer wait for this one's
  cv_.notify_all();
}

DepartedWorkers StepCoordinator::departed() const {
  return Locked([&] { return roster_.membership().departed(); });
}

HubStatus StepCoordinator::Leave(const proto::LeaveRequest& req) {
  std::lock_guard<std::mutex> lock(mu_);
  WorkerSlot* slot = nullptr;
  if (HubStatus s = roster_.Leave(req, &slot); !s.ok()) return s;
  ReduceReadySegments();
  cv_.notify_all();
  return HubStatus::Ok();
}

bool StepCoordinator::WaitForParticipants(std::unique_lock<std::mutex>& lock, int needed,
                                          const std::function<void(int)>& say_why) {
  return WaitForCount(
      lock, cv_, stop_, needed,
      [&] {
        roster_.ReleaseQuarantined();
        return static_cast<int>(Takers().size());
      },
      say_why);
}

}  // namespace mt
