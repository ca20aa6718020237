#include "hub/membership.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "proto/wire.h"

namespace mt {

using Code = HubStatus::Code;

const char* StateName(WorkerSlot::State s) {
  switch (s) {
    case WorkerSlot::State::kJoined: return "joined";
    case WorkerSlot::State::kWaiting: return "waiting";
    case WorkerSlot::State::kActive: return "active";
    case WorkerSlot::State::kLate: return "late";
    case WorkerSlot::State::kGone: return "gone";
  }
  return "?";
}

HubStatus Membership::BatchCap(int64_t budget, int* max_batch) const {
  *max_batch = static_cast<int>(rules_.global_batch);
  if (budget <= 0) return HubStatus::Ok();
  const int64_t fits = (budget - static_cast<int64_t>(rules_.fixed_bytes)) /
                       static_cast<int64_t>(std::max<size_t>(rules_.bytes_per_sample, 1));
  if (fits < 1)
    return HubStatus::Error(Code::kResourceExhausted,
                            "memory budget of " + std::to_string(budget >> 10) +
                                " KiB holds no batch: the model needs " +
                                std::to_string(rules_.fixed_bytes >> 10) + " KiB plus " +
                                std::to_string(rules_.bytes_per_sample >> 10) + " KiB per sample");
  *max_batch = static_cast<int>(std::min<int64_t>(fits, rules_.global_batch));
  return HubStatus::Ok();
}

HubStatus Membership::Admit(const proto::JoinRequest& req, const std::string& peer,
                            WorkerSlot** out) {
  if (req.protocol_version() != wire::kProtocolVersion)
    return HubStatus::Error(Code::kFailedPrecondition, "protocol version " +
                                                           std::to_string(req.protocol_version()) +
                                                           " is not supported (hub speaks " +
                                                           std::to_string(wire::kProtocolVersion) +
                                                           "); upgrade the older side");
  if (!rules_.token.empty() && req.token() != rules_.token)
    return HubStatus::Error(Code::kUnauthenticated, "wrong or missing token");
  // OUT_OF_RANGE, not UNAVAILABLE: a worker should stop, not retry.
  if (closed_) return HubStatus::Error(Code::kOutOfRange, "the run has ended");
  int max_batch = 0;
  if (HubStatus s = BatchCap(req.device().memory_budget_bytes(), &max_batch); !s.ok()) return s;
  const int id = static_cast<int>(slots_.size());
  auto slot =
      std::make_unique<WorkerSlot>(id, rules_.segments, rules_.param_count, rules_.compression);
  slot->info = req.device();
  slot->name = req.device().name().empty() ? "worker" + std::to_string(id) : req.device().name();
  slot->device = wire::DeviceName(req.device().device());
  slot->peer = peer;
  slot->max_batch = max_batch;
  spdlog::info("worker {} joined: {} ({}, {} cores, {} threads{}) from {}", id, slot->name,
               slot->device, req.device().cores(), req.device().threads(),
               max_batch < rules_.global_batch
                   ? ", batch at most " + std::to_string(max_batch) + " by its memory budget"
                   : "",
               peer);
  *out = slot.get();
  slots_.push_back(std::move(slot));
  return HubStatus::Ok();
}

HubStatus Membership::Attach(const proto::Hello& hello, WorkerLink* link, WorkerSlot** out) {
  WorkerSlot* slot = Find(hello.worker_id());
  if (!slot)
    return HubStatus::Error(Code::kNotFound, "unknown worker id " +
                                                 std::to_string(hello.worker_id()) +
                                                 " (Join first)");
  if (!rules_.token.empty() && hello.token() != rules_.token)
    return HubStatus::Error(Code::kUnauthenticated, "wrong or missing token");
  if (slot->state != WorkerSlot::State::kJoined)
    return HubStatus::Error(Code::kFailedPrecondition, "worker " + std::to_string(slot->id) +
                                                           " is " + StateName(slot->state) +
                                                           ", not waiting for a stream");
  slot->SetLink(link);
  slot->state = WorkerSlot::State::kWaiting;
  slot->placement = hello.placement();
  if (!slot->placement.empty()) spdlog::info("worker {} placement: {}", slot->id, slot->placement);
  *out = slot;
  return HubStatus::Ok();
}

HubStatus Membership::FindLeaving(const proto::LeaveRequest& req, WorkerSlot** out) {
  WorkerSlot* slot = Find(req.worker_id());
  if (!slot)
    return HubStatus::Error(Code::kNotFound,
                            "unknown worker id " + std::to_string(req.worker_id()));
  if (!rules_.token.empty() && req.token() != rules_.token)
    return HubStatus::Error(Code::kUnauthenticated, "wrong or missing token");
  *out = slot;
  return HubStatus::Ok();
}

bool Membership::Remove(WorkerSlot* slot) {
  slot->SetLink(nullptr);
  const bool was_in = slot->state != WorkerSlot::State::kGone;
  slot->state = WorkerSlot::State::kGone;
  slot->inbox.Discard();
  return was_in;
}

WorkerSlot* Membership::Find(int id) const {
  if (id < 0 || id >= static_cast<int>(slots_.size())) return nullptr;
  return slots_[static_cast<size_t>(id)].get();
}

std::vector<WorkerSlot*> Membership::Participants() const {
  std::vector<WorkerSlot*> who;
  for (const auto& s : slots_)
    if (s->in_run()) who.push_back(s.get());
  return who;
}

std::vector<WorkerSlot*> Membership::NotGone() const {
  std::vector<WorkerSlot*> who;
  for (const auto& s : slots_)
    if (s->state != WorkerSlot::State::kGone) who.push_back(s.get());
  return who;
}

}  // namespace mt
