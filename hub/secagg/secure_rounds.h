// mthub --secure-aggregation: the hub's part of secure aggregation
// (core/secagg/secagg_server.h) fitted to the step cycle, over protocol
// messages. The hub keeps each worker's box key (from its Hello) and its
// latest bundle (sent ahead of the round it will mask with); a round's
// members are workers whose bundles are all shared among each other; after
// the barrier it asks the survivors for their shares and unmasks the sum.
// Pure: no threads, no clocks, no links; the coordinator sends what it
// returns and calls it under its lock (hub/coordinator/secure_round.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/secagg/secagg_server.h"
#include "hub.pb.h"

namespace mt {

class SecureRounds {
 public:
  // `workers`: --workers, which sets the threshold; the updates cover
  // parameters [begin, end) (the lowest trained layer up).
  SecureRounds(int workers, size_t begin, size_t end);

  // What every JoinReply carries.
  const proto::SecureAggregation& settings() const { return settings_; }
  int threshold() const { return settings_.threshold(); }

  // A worker's Hello: "" when its box key is usable, else why not.
  std::string OnHello(int id, const std::string& box_key);
  // A worker gone for good: no longer a holder.
  void Forget(int id);
  // Who holds shares now, for every worker that said Hello.
  proto::HubMessage Holders() const;
  // A worker's bundle for its next round: "" when kept, else why refused.
  std::string OnBundle(int id, const proto::SecAggBundle& bundle);

  // Of `ids` (ascending), those whose bundles are shared among all of them
  // (the largest such set the rule "drop who is not covered" reaches).
  std::vector<int> Coverable(std::vector<int> ids) const;
  // The round of `step` over `ids` (Coverable, at least the threshold):
  // their bundles are used up. Returns the plan's members.
  std::vector<proto::SecAggMember> BeginRound(int64_t step, const std::vector<int>& ids);
  bool in_round() const { return in_round_; }

  // After the barrier: each whole masked update (the inbox's float buffer,
  // holding the ring's bits) with its weight. Returns each survivor's
  // unmasking request; throws std::runtime_error when fewer than the
  // threshold survived.
  struct Update {
    int id = -1;
    const float* values = nullptr;  // the whole parameter vector
    double weight = 0;
  };
  std::map<int, proto::HubMessage> Close(const std::vector<Update>& updates);
  // A survivor's shares: "" when taken, else why refused.
  std::string OnReveal(int id, const proto::SecAggReveal& reveal);
  bool CanFinish() const { return server_->CanFinish(); }
  // The survivors' weighted average, unmasked: a whole parameter vector
  // (zero below begin), valid until the next round.
  const std::vector<float>& Finish();

 private:
  struct Pending {
    secagg::Key32 mask_key{};
    std::vector<secagg::SealedShare> boxes;
    std::vector<int> holders;  // the sender and every box's recipient
  };

  proto::SecureAggregation settings_;
  size_t begin_;
  std::map<int, secagg::Key32> box_keys_;
  std::map<int, Pending> bundles_;
  std::unique_ptr<secagg::SecAggServer> server_;
  bool in_round_ = false;
  int64_t step_ = -1;
  std::vector<uint32_t> bits_;  // one update's ring values, reused
  std::vector<float> average_;  // the unmasked result, reused
};

}  // namespace mt
