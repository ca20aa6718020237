#include "hub/coordinator/worker_roster.h"

#include <spdlog/spdlog.h>

#include <cstdio>

#include "core/util/seconds.h"
#include "hub/membership/churn_log.h"
#include "hub/membership/worker_row.h"
#include "hub/policy/plausible_speed.h"
#include "hub/report/hub_trace.h"

namespace mt {

using Code = HubStatus::Code;

AdmissionRules WorkerRoster::RulesOf(const HubConfig& config, const RunPlan& plan,
                                     const MasterModel& master) {
  AdmissionRules rules;
  rules.token = config.token;
  rules.global_batch = plan.batch();
  rules.fixed_bytes = master.worker_fixed_bytes();
  rules.bytes_per_sample = master.worker_bytes_per_sample();
  rules.param_count = master.param_count();
  rules.segments = master.segments();
  rules.matrices = master.param_matrices();
  rules.max_workers = config.max_workers_or_default();
  return rules;
}

WorkerRoster::WorkerRoster(AdmissionRules rules, BatchController& controller,
                           Attendance& attendance, StepMessages& messages, RunMetrics& metrics,
                           HubEventSink* events, const RoundState& state,
                           const std::vector<WorkerSlot*>& round)
    : membership_(std::move(rules)),
      controller_(controller),
      attendance_(attendance),
      messages_(messages),
      metrics_(metrics),
      events_(events),
      state_(state),
      round_(round) {}

void WorkerRoster::Emit(HubEvent::Kind kind, int worker, std::string detail) {
  if (!events_) return;
  const WorkerSlot* slot = membership_.Find(worker);
  events_->OnEvent(
      HubEvent{kind, state_.step, worker, std::move(detail), slot ? slot->name : std::string()});
}

HubStatus WorkerRoster::Join(const proto::JoinRequest& req, const std::string& peer,
                             proto::JoinReply* reply, const std::string& identity) {
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

HubStatus WorkerRoster::Hello(const proto::Hello& hello, WorkerLink* link, int* worker_id) {
  WorkerSlot* slot = nullptr;
  if (HubStatus s = membership_.Attach(hello, link, &slot); !s.ok()) return s;
  *worker_id = slot->id;
  if (const double hint = hello.compute_ms_per_sample();
      hint != 0 && !controller_.Hint(slot->id, hint))
    spdlog::warn(
        "worker {} ({}) claims {:.3g} ms per sample, not a time a device takes (this model's "
        "arithmetic needs {:.3g} ms at {:.0e} FLOP/s): not believed; its measured steps alone "
        "size its batch",
        slot->id, slot->name, hint, controller_.hint_floor(), kFastestDeviceFlopsPerSecond);
  Emit(HubEvent::Kind::kWorkerReady, slot->id, slot->name);
  return HubStatus::Ok();
}

int WorkerRoster::FollowingBatch(int per_worker, std::string* timings) const {
  std::vector<BatchController::Member> members;
  for (auto* s : membership_.Participants()) {
    members.push_back({s->id, s->max_batch, 1.0});
    if (timings)
      *timings += fmt::format("{}worker {} {:.3f} ms", timings->empty() ? "" : ", ", s->id,
                              controller_.hint(s->id));
  }
  return controller_.FollowingTotal(per_worker, members);
}

WorkerRoster::Delivery WorkerRoster::Deliver(WorkerSlot& slot, const proto::GradientChunk& chunk,
                                             int64_t arrived_us) {
  Delivery d;
  if (slot.state == WorkerSlot::State::kLate) {
    // The step it was late for went on without it; its gradient is stale.
    // Once the whole of it is in, the worker is evidently back.
    if (chunk.last() && !slot.quarantine.back_ready) {
      NoteBack(&slot);
      d.came_back = true;
    }
    return d;
  }
  // A worker that has said Leave may still have chunks in flight: they
  // count for nothing, and are no fault of its.
  if (slot.state == WorkerSlot::State::kGone) return d;
  const auto chunk_bytes = static_cast<int64_t>(
      (chunk.values_size() + chunk.masked_size()) * sizeof(float) + chunk.packed().size());
  metrics_.gradient_bytes_in += chunk_bytes;
  slot.stats.bytes_in += chunk_bytes;
  if (slot.state != WorkerSlot::State::kActive) {
    d.status = HubStatus::Error(Code::kInvalidArgument,
                                "gradient from a worker that is not in the step loop");
    return d;
  }
  if (trace_)
    if (std::string why = HubTrace::Check(chunk); !why.empty()) {
      d.status = HubStatus::Error(Code::kInvalidArgument, std::move(why));
      return d;
    }
  const bool first_chunk = slot.inbox.segments_received() == 0;
  if (std::string why = slot.inbox.Accept(chunk); !why.empty()) {
    d.non_finite = slot.inbox.refused_non_finite();
    if (d.non_finite) BanIdentity(slot, why);
    // A refused one's stream may not have closed yet, but its inbox
    // expects nothing.
    for (const WorkerSlot* s : round_)
      d.others_in_round += s != &slot && s->state == WorkerSlot::State::kActive &&
                           (s->inbox.expecting() || s->inbox.complete());
    d.status = HubStatus::Error(Code::kInvalidArgument, std::move(why));
    return d;
  }
  if (trace_) trace_->OnChunk(slot.id, chunk, first_chunk, arrived_us);
  if (slot.inbox.complete()) {
    slot.inbox.StampComplete(Clock::now());
    slot.device_status = chunk.device();
  }
  d.counts = true;
  return d;
}

void WorkerRoster::NoteBack(WorkerSlot* slot) {
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
}

void WorkerRoster::StreamClosed(WorkerSlot* slot, const HubStatus& why) {
  const bool was_in = membership_.StreamClosed(slot);
  if (!why.ok()) {
    LogChurn(spdlog::level::warn, fmt::format("worker {} ({}) refused and dropped: {}", slot->id,
                                              slot->name, why.message));
    Emit(HubEvent::Kind::kWorkerDropped, slot->id, why.message);
  } else if (was_in && !closed()) {
    LogChurn(spdlog::level::warn,
             fmt::format("worker {} ({}) left: stream closed", slot->id, slot->name));
    Emit(HubEvent::Kind::kWorkerDropped, slot->id, "stream closed");
  }
  const int id = slot->id;
  FreeDeparted();  // while the controller still has its pace, for its row
  controller_.Forget(id);
  attendance_.Forget(id);
}

void WorkerRoster::FreeDeparted() {
  // After the run the goodbye goes out to the slots outside the lock.
  if (closed()) return;
  membership_.FreeDeparted(round_,
                           [&](const WorkerSlot& s) { return WorkerRowOf(s, controller_); });
}

HubStatus WorkerRoster::Leave(const proto::LeaveRequest& req, WorkerSlot** leaving) {
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
  attendance_.Forget(slot->id);
  *leaving = slot;
  return HubStatus::Ok();
}

void WorkerRoster::ReleaseQuarantined() {
  membership_.ReleaseQuarantined(Clock::now(), [&](WorkerSlot* s) {
    spdlog::info("worker {} ({}) is back after missing a step; it rejoins at the next step", s->id,
                 s->name);
    Emit(HubEvent::Kind::kWorkerBack, s->id);
  });
}

void WorkerRoster::LeaveOut(WorkerSlot* s, double waited_seconds) {
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

void WorkerRoster::Refuse(WorkerSlot* s, const std::string& why) {
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
  attendance_.Forget(s->id);
}

void WorkerRoster::SetAside(WorkerSlot* s) {
  s->set_aside = true;
  // Back in a round, it starts from the full model: it missed the rounds between.
  s->state = WorkerSlot::State::kWaiting;
  ++metrics_.set_asides;
  const double ms = controller_.ms_per_sample(s->id);
  char reason[160];
  std::snprintf(reason, sizeof reason,
                "set aside: at %.2f ms a sample it makes the rounds slower than they are "
                "without it",
                ms);
  spdlog::warn("worker {} ({}) {}; tried again later", s->id, s->name, reason);
  Emit(HubEvent::Kind::kWorkerSetAside, s->id, reason);
  s->Send(messages_.LeftOut(state_.step, reason));
}

void WorkerRoster::BringBack(WorkerSlot* s) {
  s->set_aside = false;
  spdlog::info("worker {} ({}) takes part again from step {}", s->id, s->name, state_.step + 1);
  Emit(HubEvent::Kind::kWorkerBroughtBack, s->id);
}

void WorkerRoster::BanIdentity(const WorkerSlot& s, const std::string& why) {
  if (!membership_.Ban(s, why)) return;
  spdlog::warn("worker {} ({}): its client certificate {} may not join again this run", s.id,
               s.name, s.session.identity);
}

}  // namespace mt
