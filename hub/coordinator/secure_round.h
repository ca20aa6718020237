// The coordinator's part in secure aggregation (mthub --secure-aggregation;
// hub/secagg/secure_rounds.h does the work): box keys at Hello and the
// holders they make, bundles ahead of rounds, a round's members, and after
// the barrier the unmasking exchange with the survivors, whose result takes
// the place of each survivor's masked update so the reduction goes on as
// it would (every input the same average: the robust aggregation and its
// watches have nothing to compare). Not thread-safe: the step coordinator
// calls it under its lock.
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "hub/coordinator/round_context.h"
#include "hub/secagg/secure_rounds.h"
#include "hub/transport/hub_status.h"

namespace mt {

class SecureRound {
 public:
  // How long survivors have to reveal their shares after a round.
  static constexpr int kUnmaskSeconds = 30;

  // `workers`: --workers, whom the threshold is of.
  SecureRound(RoundContext& round, int workers);

  // A Join from a worker that cannot take part: refused once the token and
  // protocol version are right (only a worker that may join hears why).
  HubStatus CheckJoin(const proto::JoinRequest& request) const;
  // Of the workers present, those that can take the next round: those
  // whose bundles cover each other, none when fewer than the threshold.
  std::vector<WorkerSlot*> Takers(const std::vector<WorkerSlot*>& present) const;
  // After a Hello: its box key, and the new holders to everyone.
  HubStatus OnHello(const proto::Hello& hello, int worker_id);
  // A worker's bundle or revealed shares.
  HubStatus OnMessage(WorkerSlot& slot, const proto::WorkerMessage& message);
  void Forget(int worker_id) { rounds_.Forget(worker_id); }
  // The round's members into the plan.
  void Begin(const std::vector<WorkerSlot*>& who);
  bool in_round() const { return rounds_.in_round(); }
  // After the barrier: the survivors are asked for their shares, and
  // their answers awaited on `cv` (under `lock`, the coordinator's) until
  // the round can be unmasked or `stop`; each survivor's inbox then holds
  // the round's average. Returns why it could not be, empty when it was
  // (or `stop` was set meanwhile).
  std::string Unmask(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                     const bool& stop);

 private:
  std::string Close();
  void Finish();

  RoundContext& r_;
  SecureRounds rounds_;
  size_t survivors_ = 0;  // of the round Close asked
};

}  // namespace mt
