// Secure aggregation's messages and the unmasking of a round.
#include "hub/coordinator/secure_round.h"

#include <spdlog/spdlog.h>

#include "core/util/constant_time.h"

namespace mt {

using Code = HubStatus::Code;

SecureRound::SecureRound(RoundContext& round, int workers)
    : r_(round),
      rounds_(workers, round.master.segments().back().begin, round.master.param_count()) {
  r_.messages.SetSecureAggregation(rounds_.settings());
}

HubStatus SecureRound::CheckJoin(const proto::JoinRequest& req) const {
  if (req.secure_aggregation() || !ConstantTimeEquals(req.token(), r_.config.token) ||
      req.protocol_version() != wire::kProtocolVersion)
    return HubStatus::Ok();
  return HubStatus::Error(Code::kFailedPrecondition,
                          "this hub runs --secure-aggregation and this worker cannot take part in "
                          "it: update mtworker");
}

std::vector<WorkerSlot*> SecureRound::Takers(const std::vector<WorkerSlot*>& present) const {
  std::vector<int> ids;
  for (const WorkerSlot* s : present) ids.push_back(s->id);
  std::vector<WorkerSlot*> who;
  for (int id : rounds_.Coverable(ids)) who.push_back(r_.roster.membership().Find(id));
  // Fewer than the threshold cannot be unmasked: nobody takes part.
  if (static_cast<int>(who.size()) < rounds_.threshold()) who.clear();
  return who;
}

HubStatus SecureRound::OnHello(const proto::Hello& hello, int worker_id) {
  WorkerSlot* slot = r_.roster.membership().Find(worker_id);
  if (!slot) return HubStatus::Ok();
  if (std::string why = rounds_.OnHello(worker_id, hello.secagg_box_key()); !why.empty())
    return HubStatus::Error(Code::kFailedPrecondition, std::move(why));
  slot->inbox.set_masked(true);
  // Everyone shares its next bundle among the holders as they now are,
  // once they are enough to share among.
  const proto::HubMessage holders = rounds_.Holders();
  if (holders.secagg_holders().holders_size() < rounds_.threshold()) return HubStatus::Ok();
  const Encoded encoded = r_.messages.Encode(holders);
  for (WorkerSlot* s : r_.roster.membership().NotGone()) s->Send(encoded);
  return HubStatus::Ok();
}

HubStatus SecureRound::OnMessage(WorkerSlot& slot, const proto::WorkerMessage& m) {
  const auto bytes = static_cast<int64_t>(m.ByteSizeLong());
  r_.metrics.gradient_bytes_in += bytes;
  slot.stats.bytes_in += bytes;
  std::string why = m.has_secagg_bundle() ? rounds_.OnBundle(slot.id, m.secagg_bundle())
                                          : rounds_.OnReveal(slot.id, m.secagg_reveal());
  if (!why.empty()) return HubStatus::Error(Code::kInvalidArgument, "secure aggregation: " + why);
  return HubStatus::Ok();
}

void SecureRound::Begin(const std::vector<WorkerSlot*>& who) {
  std::vector<int> ids;
  for (const WorkerSlot* s : who) ids.push_back(s->id);
  r_.messages.SetPlanMembers(rounds_.BeginRound(r_.state.step, ids));
}

std::string SecureRound::Close() {
  int64_t total = 0;
  for (const WorkerSlot* s : r_.round) total += s->assignment.batch;
  std::vector<SecureRounds::Update> updates;
  for (const WorkerSlot* s : r_.round)
    if (s->state == WorkerSlot::State::kActive && s->inbox.complete())
      updates.push_back({s->id, s->inbox.gradient().data(),
                         static_cast<double>(s->assignment.batch) / static_cast<double>(total)});
  survivors_ = updates.size();
  std::map<int, proto::HubMessage> requests;
  try {
    requests = rounds_.Close(updates);
  } catch (const std::exception& e) {
    return e.what();
  }
  for (const auto& [id, request] : requests)
    if (WorkerSlot* s = r_.roster.membership().Find(id)) s->Send(r_.messages.Encode(request));
  return {};
}

std::string SecureRound::Unmask(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                                const bool& stop) {
  if (std::string why = Close(); !why.empty()) return why;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kUnmaskSeconds);
  while (!rounds_.CanFinish()) {
    if (stop) return {};
    if (std::chrono::steady_clock::now() >= deadline)
      return "too few survivors revealed their shares within " + std::to_string(kUnmaskSeconds) +
             " s to unmask step " + std::to_string(r_.state.step + 1);
    cv.wait_until(lock, deadline);
  }
  Finish();
  return {};
}

void SecureRound::Finish() {
  const std::vector<float>& average = rounds_.Finish();
  for (WorkerSlot* s : r_.round)
    if (s->inbox.complete()) s->inbox.Unmask(average.data());
  const size_t members = r_.round.size();
  ++r_.metrics.secure_rounds;
  r_.metrics.secure_dropped_recovered += static_cast<int64_t>(members - survivors_);
  if (survivors_ < members)
    spdlog::warn("step {}: {} of {} workers' masks removed from the survivors' shares",
                 r_.state.step + 1, members - survivors_, members);
}

}  // namespace mt
