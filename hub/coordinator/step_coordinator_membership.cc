// The coordinator's side of who is in the run: joining, streams opening and
// closing, late gradients, leaving, leave-outs at the deadline, quarantine
// and refusals. The rules themselves are hub/membership/membership.h and
// hub/membership/quarantine.h; this logs, emits events and tells the workers.
#include <spdlog/spdlog.h>

#include <cstdio>

#include "hub/coordinator/step_coordinator.h"
#include "hub/membership/churn_log.h"
#include "hub/membership/worker_row.h"
#include "hub/report/hub_trace.h"

namespace mt {

using Code = HubStatus::Code;

namespace {

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace

void StepCoordinator::Emit(HubEvent::Kind kind, int worker, std::string detail) {
  if (!events_) return;
  const WorkerSlot* slot = membership_.Find(worker);
  events_->OnEvent(
      HubEvent{kind, state_.step, worker, std::move(detail), slot ? slot->name : std::string()});
}

HubStatus StepCoordinator::Join(const proto::JoinRequest& req, const std::string& peer,
                                proto::JoinReply* reply, const std::string& identity) {
  std::lock_guard<std::mutex> lock(mu_);
  for (WorkerSlot* gone : membership_.ExpireJoins(Clock::now())) {
    LogChurn(
        spdlog::level::warn,
        fmt::format("worker {} ({}) joined but opened no stream within {} s: its slot is freed",
                    gone->id, gone->name, Membership::kJoinExpiry.count()));
    Emit(HubEvent::Kind::kWorkerDropped, gone->id, "joined but opened no stream");
  }
  FreeDeparted();
  WorkerSlot* slot = nullptr;
  if (HubStatus s = membership_.Admit(req, peer, &slot, identity); !s.ok()) {
    if (s.code == Code::kPermissionDenied) {
      ++metrics_.refused_rejoins;  // Admit logged it, at most once per 10 s
      if (events_)
        events_->OnEvent(HubEvent{HubEvent::Kind::kRejoinRefused, state_.step, -1, identity,
                                  req.device().name()});
    }
    return s;
  }
  Emit(HubEvent::Kind::kWorkerJoined, slot->id, slot->name);
  messages_.FillJoinReply(*slot, trace_ != nullptr, reply);
  if (trace_) trace_->OnJoin(slot->id, slot->name);
  return HubStatus::Ok();
}

HubStatus StepCoordinator::Hello(const proto::Hello& hello, WorkerLink* link, int* worker_id) {
  std::lock_guard<std::mutex> lock(mu_);
  WorkerSlot* slot = nullptr;
  if (HubStatus s = membership_.Attach(hello, link, &slot); !s.ok()) return s;
  *worker_id = slot->id;
  controller_.Hint(slot->id, hello.compute_ms_per_sample());
  Emit(HubEvent::Kind::kWorkerReady, slot->id, slot->name);
  cv_.notify_all();
  return HubStatus::Ok();
}

HubStatus StepCoordinator::Gradient(int worker_id, const proto::GradientChunk& chunk) {
  const int64_t arrived_us = trace_ ? trace::NowMicros() : 0;
  std::lock_guard<std::mutex> lock(mu_);
  WorkerSlot* slot = membership_.Find(worker_id);
  if (!slot)
    return HubStatus::Error(Code::kNotFound, "unknown worker id " + std::to_string(worker_id));
  if (slot->state == WorkerSlot::State::kLate) {
    // The step it was late for went on without it; its gradient is stale.
    // Once the whole of it is in, the worker is evidently back.
    if (chunk.last() && !slot->quarantine.back_ready) NoteBack(slot);
    return HubStatus::Ok();
  }
  // A worker that has said Leave may still have chunks in flight: they
  // count for nothing, and are no fault of its.
  if (slot->state == WorkerSlot::State::kGone) return HubStatus::Ok();
  const auto chunk_bytes =
      static_cast<int64_t>(chunk.values_size() * sizeof(float) + chunk.packed().size());
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
      BanIdentity(*slot, why);
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

void StepCoordinator::NoteBack(WorkerSlot* slot) {
  // It takes part again from the next step, with the current weights. Left
  // out again and again, it sits out a while first (hub/membership/quarantine.h).
  slot->quarantine.back_ready = true;
  const double wait = Seconds(slot->quarantine.until - Clock::now());
  if (wait > 0) {
    spdlog::warn(
        "worker {} ({}) has missed {} deadlines lately: it sits out {:.0f} s before it "
        "takes part again",
        slot->id, slot->name, slot->quarantine.strikes, wait);
    Emit(HubEvent::Kind::kWorkerQuarantined, slot->id);
  }
  ReleaseQuarantined();
  cv_.notify_all();
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
  WorkerSlot* slot = membership_.Find(worker_id);
  if (!slot) return;
  const bool was_in = membership_.StreamClosed(slot);
  ReduceReadySegments();  // the others' segments no longer wait for this one's
  cv_.notify_all();
  if (!why.ok()) {
    LogChurn(spdlog::level::warn, fmt::format("worker {} ({}) refused and dropped: {}", slot->id,
                                              slot->name, why.message));
    Emit(HubEvent::Kind::kWorkerDropped, slot->id, why.message);
  } else if (was_in && !finished_) {
    LogChurn(spdlog::level::warn,
             fmt::format("worker {} ({}) left: stream closed", slot->id, slot->name));
    Emit(HubEvent::Kind::kWorkerDropped, slot->id, "stream closed");
  }
  FreeDeparted();  // while the controller still has its pace, for its row
  controller_.Forget(worker_id);
}

void StepCoordinator::FreeDeparted() {
  // After Finish the goodbye goes out to the slots outside the lock.
  if (finished_) return;
  membership_.FreeDeparted(round_,
                           [&](const WorkerSlot& s) { return WorkerRowOf(s, controller_); });
}

DepartedWorkers StepCoordinator::departed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return membership_.departed();
}

HubStatus StepCoordinator::Leave(const proto::LeaveRequest& req) {
  std::lock_guard<std::mutex> lock(mu_);
  WorkerSlot* slot = nullptr;
  if (HubStatus s = membership_.FindLeaving(req, &slot); !s.ok()) return s;
  slot->left_because = req.reason();
  slot->session.said_leave = true;
  if (slot->state != WorkerSlot::State::kGone) {
    LogChurn(spdlog::level::info,
             fmt::format("worker {} ({}) leaves: {}", slot->id, slot->name,
                         req.reason().empty() ? "no reason given" : req.reason()));
    Emit(HubEvent::Kind::kWorkerLeft, slot->id, req.reason());
  }
  // The link stays until the stream closes: the worker cancels it itself.
  slot->state = WorkerSlot::State::kGone;
  slot->inbox.Release();
  controller_.Forget(slot->id);
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
    ReleaseQuarantined();
    const int n = static_cast<int>(membership_.Participants().size());
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

void StepCoordinator::ReleaseQuarantined() {
  membership_.ReleaseQuarantined(Clock::now(), [&](WorkerSlot* s) {
    spdlog::info("worker {} ({}) is back after missing a step; it rejoins at the next step", s->id,
                 s->name);
    Emit(HubEvent::Kind::kWorkerBack, s->id);
  });
}

void StepCoordinator::LeaveOut(WorkerSlot* s, double waited_seconds) {
  membership_.LeaveOut(s, Clock::now());
  // It took at least this long: the controller gives it less next time.
  controller_.Observe(s->id, s->assignment.batch * static_cast<int>(state_.steps),
                      1e3 * waited_seconds, -1, static_cast<int>(state_.steps));
  char reason[128];
  std::snprintf(reason, sizeof reason, "missed the deadline of step %lld (%.1f s)",
                static_cast<long long>(state_.step + 1), waited_seconds);
  spdlog::warn("worker {} ({}) {}; the step goes on without it", s->id, s->name, reason);
  Emit(HubEvent::Kind::kWorkerLeftOut, s->id, reason);
  s->Send(messages_.LeftOut(state_.step, reason));
}

void StepCoordinator::Refuse(WorkerSlot* s, const std::string& why) {
  LogChurn(spdlog::level::warn,
           fmt::format("worker {} ({}) refused and dropped: {}", s->id, s->name, why));
  Emit(HubEvent::Kind::kWorkerDropped, s->id, why);
  ++metrics_.refused_contributions;
  BanIdentity(*s, why);
  // A goodbye, so an honest worker caught by mistake stops cleanly instead
  // of waiting for a step that no longer includes it.
  s->Send(messages_.Stop("refused: " + why, state_.step, -1));
  membership_.Remove(s);
  controller_.Forget(s->id);
  cv_.notify_all();
}

void StepCoordinator::BanIdentity(const WorkerSlot& s, const std::string& why) {
  if (!membership_.Ban(s, why)) return;
  spdlog::warn("worker {} ({}): its client certificate {} may not join again this run", s.id,
               s.name, s.session.identity);
}

}  // namespace mt
