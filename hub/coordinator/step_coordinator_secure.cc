// The coordinator's part in secure aggregation (mthub --secure-aggregation;
// hub/secagg/secure_rounds.h does the work): box keys at Hello and the
// holders they make, bundles ahead of rounds, a round's members, and after
// the barrier the unmasking exchange with the survivors, whose result takes
// the place of each survivor's masked update so the reduction goes on as
// it would (every input the same average: the robust aggregation and its
// watches have nothing to compare).
#include <spdlog/spdlog.h>

#include "hub/coordinator/step_coordinator.h"

namespace mt {

using Code = HubStatus::Code;

std::vector<WorkerSlot*> StepCoordinator::Takers() const {
  std::vector<WorkerSlot*> present = roster_.membership().Participants();
  if (!secure_) return present;
  std::vector<int> ids;
  for (const WorkerSlot* s : present) ids.push_back(s->id);
  std::vector<WorkerSlot*> who;
  for (int id : secure_->Coverable(ids)) who.push_back(roster_.membership().Find(id));
  // Fewer than the threshold cannot be unmasked: nobody takes part.
  if (static_cast<int>(who.size()) < secure_->threshold()) who.clear();
  return who;
}

HubStatus StepCoordinator::SecureHello(const proto::Hello& hello, int worker_id) {
  WorkerSlot* slot = roster_.membership().Find(worker_id);
  if (!secure_ || !slot) return HubStatus::Ok();
  if (std::string why = secure_->OnHello(worker_id, hello.secagg_box_key()); !why.empty())
    return HubStatus::Error(Code::kFailedPrecondition, std::move(why));
  slot->inbox.set_masked(true);
  // Everyone shares its next bundle among the holders as they now are,
  // once they are enough to share among.
  const proto::HubMessage holders = secure_->Holders();
  if (holders.secagg_holders().holders_size() < secure_->threshold()) return HubStatus::Ok();
  const Encoded encoded = messages_.Encode(holders);
  for (WorkerSlot* s : roster_.membership().NotGone()) s->Send(encoded);
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
  const auto bytes = static_cast<int64_t>(m.ByteSizeLong());
  metrics_.gradient_bytes_in += bytes;
  slot->stats.bytes_in += bytes;
  std::string why = m.has_secagg_bundle() ? secure_->OnBundle(worker_id, m.secagg_bundle())
                                          : secure_->OnReveal(worker_id, m.secagg_reveal());
  if (!why.empty()) return HubStatus::Error(Code::kInvalidArgument, "secure aggregation: " + why);
  cv_.notify_all();
  return HubStatus::Ok();
}

void StepCoordinator::BeginSecureRound(const std::vector<WorkerSlot*>& who) {
  if (!secure_) return;
  std::vector<int> ids;
  for (const WorkerSlot* s : who) ids.push_back(s->id);
  messages_.SetPlanMembers(secure_->BeginRound(state_.step, ids));
}

bool StepCoordinator::SecureFailure(const std::string& why) {
  state_.diverged = "secure aggregation: " + why;
  spdlog::error("{}", state_.diverged);
  stop_ = true;
  cv_.notify_all();
  return false;
}

bool StepCoordinator::UnmaskRound(std::unique_lock<std::mutex>& lock) {
  if (!secure_ || !secure_->in_round()) return true;
  int64_t total = 0;
  for (const WorkerSlot* s : round_) total += s->assignment.batch;
  std::vector<SecureRounds::Update> updates;
  for (const WorkerSlot* s : round_)
    if (s->state == WorkerSlot::State::kActive && s->inbox.complete())
      updates.push_back({s->id, s->inbox.gradient().data(),
                         static_cast<double>(s->assignment.batch) / static_cast<double>(total)});
  std::map<int, proto::HubMessage> requests;
  try {
    requests = secure_->Close(updates);
  } catch (const std::exception& e) {
    return SecureFailure(e.what());
  }
  for (const auto& [id, request] : requests)
    if (WorkerSlot* s = roster_.membership().Find(id)) s->Send(messages_.Encode(request));
  const auto deadline = Clock::now() + std::chrono::seconds(kUnmaskSeconds);
  while (!secure_->CanFinish()) {
    if (stop_) return false;
    if (Clock::now() >= deadline)
      return SecureFailure("too few survivors revealed their shares within " +
                           std::to_string(kUnmaskSeconds) + " s to unmask step " +
                           std::to_string(state_.step + 1));
    cv_.wait_until(lock, deadline);
  }
  const std::vector<float>& average = secure_->Finish();
  for (WorkerSlot* s : round_)
    if (s->inbox.complete()) s->inbox.Unmask(average.data());
  ++metrics_.secure_rounds;
  metrics_.secure_dropped_recovered += static_cast<int64_t>(round_.size() - updates.size());
  if (updates.size() < round_.size())
    spdlog::warn("step {}: {} of {} workers' masks removed from the survivors' shares",
                 state_.step + 1, round_.size() - updates.size(), round_.size());
  return true;
}

}  // namespace mt
