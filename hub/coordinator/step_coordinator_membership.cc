// The coordinator's events from the transport: each takes the lock, hands
// who-is-in-the-run to the roster (hub/coordinator/worker_roster.h), and
// does what the step needs of it: the reduction goes on without a worker
// that left, and waiters wake. Also the waits for enough workers.
#include <spdlog/spdlog.h>

#include "core/util/constant_time.h"
#include "core/util/seconds.h"
#include "hub/coordinator/step_coordinator.h"
#include "hub/membership/churn_log.h"
#include "hub/report/hub_trace.h"

namespace mt {

using Code = HubStatus::Code;

HubStatus StepCoordinator::Join(const proto::JoinRequest& req, const std::string& peer,
                                proto::JoinReply* reply, const std::string& identity) {
  std::lock_guard<std::mutex> lock(mu_);
  // After the token and the protocol version, which the roster checks
  // first: only a worker that may join hears why it cannot.
  if (secure_ && !req.secure_aggregation() && ConstantTimeEquals(req.token(), config_.token) &&
      req.protocol_version() == wire::kProtocolVersion)
    return HubStatus::Error(Code::kFailedPrecondition,
                            "this hub runs --secure-aggregation and this worker cannot take part "
                            "in it: update mtworker");
  return roster_.Join(req, peer, reply, identity);
}

HubStatus StepCoordinator::Hello(const proto::Hello& hello, WorkerLink* link, int* worker_id) {
  std::lock_guard<std::mutex> lock(mu_);
  HubStatus s = roster_.Hello(hello, link, worker_id);
  if (s.ok()) s = SecureHello(hello, *worker_id);
  if (s.ok()) cv_.notify_all();
  return s;
}

HubStatus StepCoordinator::Gradient(int worker_id, const proto::GradientChunk& chunk) {
  const int64_t arrived_us = trace_ ? trace::NowMicros() : 0;
  std::lock_guard<std::mutex> lock(mu_);
  WorkerSlot* slot = roster_.membership().Find(worker_id);
  if (!slot)
    return HubStatus::Error(Code::kNotFound, "unknown worker id " + std::to_string(worker_id));
  if (slot->state == WorkerSlot::State::kLate) {
    // The step it was late for went on without it; its gradient is stale.
    // Once the whole of it is in, the worker is evidently back.
    if (chunk.last() && !slot->quarantine.back_ready) {
      roster_.NoteBack(slot);
      cv_.notify_all();
    }
    return HubStatus::Ok();
  }
  // A worker that has said Leave may still have chunks in flight: they
  // count for nothing, and are no fault of its.
  if (slot->state == WorkerSlot::State::kGone) return HubStatus::Ok();
  const auto chunk_bytes = static_cast<int64_t>(
      (chunk.values_size() + chunk.masked_size()) * sizeof(float) + chunk.packed().size());
  metrics_.gradient_bytes_in += chunk_bytes;
  slot->stats.bytes_in += chunk_bytes;
  if (slot->state != WorkerSlot::State::kActive)
    return HubStatus::Error(Code::kInvalidArgument,
                            "gradient from a worker that is not in the step loop");
  if (trace_)
    if (std::string why = HubTrace::Check(chunk); !why.empty())
      return HubStatus::Error(Code::kInvalidArgument, std::move(why));
  const bool first_chunk = slot->inbox.segments_received() == 0;
  if (std::string why = slot->inbox.Accept(chunk); !why.empty()) {
    if (slot->inbox.refused_non_finite()) {
      roster_.BanIdentity(*slot, why);
      NoteNonFinite(slot, why);
    }
    return HubStatus::Error(Code::kInvalidArgument, std::move(why));
  }
  if (trace_) trace_->OnChunk(worker_id, chunk, first_chunk, arrived_us);
  if (slot->inbox.complete()) {
    slot->inbox.StampComplete(Clock::now());
    slot->device_status = chunk.device();
    cv_.notify_all();
  }
  ReduceReadySegments();
  if (slot->inbox.complete()) AdvanceIfComplete();
  return HubStatus::Ok();
}

void StepCoordinator::NoteNonFinite(const WorkerSlot* refused, const std::string& why) {
  // One worker's non-finite result is refused and the run goes on without
  // it; when every worker that tries the step fails the same way, waiting
  // for more workers would wait forever.
  // Others still in the step: computing or done, not refused (a refused
  // one's stream may not have closed yet, but its inbox expects nothing).
  int others = 0;
  for (const WorkerSlot* s : round_)
    others += s != refused && s->state == WorkerSlot::State::kActive &&
              (s->inbox.expecting() || s->inbox.complete());
  if (!state_.NoteNonFinite(why, others)) return;
  spdlog::error("{}", state_.diverged);
  stop_ = true;
  cv_.notify_all();
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
  std::lock_guard<std::mutex> lock(mu_);
  return roster_.membership().departed();
}

HubStatus StepCoordinator::Leave(const proto::LeaveRequest& req) {
  std::lock_guard<std::mutex> lock(mu_);
  WorkerSlot* slot = nullptr;
  if (HubStatus s = roster_.Leave(req, &slot); !s.ok()) return s;
  ReduceReadySegments();
  cv_.notify_all();
  return HubStatus::Ok();
}

bool StepCoordinator::WaitForMinWorkers(std::unique_lock<std::mutex>& lock) {
  // Said again each time workers come and go: logged as their churn is.
  return WaitForParticipants(lock, config_.min_workers, [&](int n) {
    if (n == 0)
      LogChurn(spdlog::level::warn, "no workers left; waiting for one to join");
    else
      LogChurn(spdlog::level::warn,
               fmt::format("{} worker(s) in the run, fewer than --min-workers {}: waiting for "
                           "more before step {}",
                           n, config_.min_workers, state_.step + 1));
  });
}

bool StepCoordinator::WaitForParticipants(std::unique_lock<std::mutex>& lock, int needed,
                                          const std::function<void(int)>& say_why) {
  auto last_log = Clock::now() - std::chrono::hours(1);
  for (;;) {
    roster_.ReleaseQuarantined();
    const int n = static_cast<int>(Takers().size());
    if (n >= needed) return true;
    if (stop_) return false;
    if (Seconds(Clock::now() - last_log) > 10) {
      say_why(n);
      last_log = Clock::now();
    }
    // Woken by every join, stream and stop; the timeout only paces the log.
    cv_.wait_for(lock, std::chrono::seconds(1));
  }
}

}  // namespace mt
