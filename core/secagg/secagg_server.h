#pragma once
// The hub's side of secure aggregation: it relays the members' keys and
// sealed shares, sums the masked updates of the members that sent all of
// theirs, and, from the shares the survivors reveal, removes the
// survivors' self masks and the dropped members' pair masks. What it ever
// holds of one worker is that worker's masked update (uniform in the ring),
// boxes it cannot open, and either its self seed (a survivor) or its mask
// key (dropped), never both: the sum is all it learns.
#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "core/secagg/fixed_point.h"
#include "core/secagg/mask_stream.h"
#include "core/secagg/round_types.h"

namespace mt::secagg {

struct UnmaskRequest {
  std::vector<int32_t> survivors;  // ascending
  std::vector<int32_t> dropped;    // ascending
  // For each survivor, the boxes it must open: the other survivors' self
  // seed shares and the dropped members' mask key shares addressed to it.
  std::map<int32_t, std::vector<SealedShare>> boxes_for;
};

class SecAggServer {
 public:
  // `threshold`: the run's, as the workers were told.
  SecAggServer(uint64_t epoch, size_t param_count, int threshold, FixedPoint fixed_point = {});

  // A round over `roster` (ascending ids, as every member was told).
  void BeginRound(uint64_t round, std::vector<Member> roster);
  // The sealed shares of the bundle a member takes the round with, kept
  // for the unmasking request (those for members outside the round are
  // left out).
  void AddBoxes(int32_t from, const std::vector<SealedShare>& boxes);
  // Parameters [first, first + n) of a member's masked update.
  void AddMasked(int32_t from, uint64_t first, const uint32_t* y, size_t n);
  // The member has sent its whole update, for weight `weight`: it counts in
  // the sum (a member that never gets here is dropped).
  void Submitted(int32_t from, double weight);

  // Ends the round's intake: every member not Submitted is dropped (its
  // partial update is discarded). Throws when fewer than the threshold
  // survive: the round cannot be unmasked.
  UnmaskRequest CloseRound();
  // A survivor's answer to the request.
  void AddRevealed(int32_t from, const std::vector<RevealedShare>& shares);
  // True once every survivor's seed and every dropped member's key has
  // threshold shares.
  bool CanFinish() const;
  // The survivors' weighted average (their weights' sum divides it), into
  // out[0..param_count). Throws std::invalid_argument where a secret has
  // fewer shares than the threshold: with fewer the hub gets nothing.
  void Finish(float* out);

  const std::vector<uint32_t>& masked_sum() const { return sum_; }

 private:
  size_t IndexOf(int32_t id) const;  // index in the roster; throws if not a member

  uint64_t epoch_;
  FixedPoint fixed_point_;
  uint64_t round_ = 0;
  int threshold_;
  bool closed_ = false;
  bool finished_ = false;
  std::vector<Member> roster_;
  std::vector<uint32_t> sum_;
  std::map<int32_t, std::vector<uint32_t>> pending_;  // updates not yet whole
  std::map<int32_t, size_t> received_;                // their values so far
  std::map<int32_t, double> weights_;                 // the Submitted members
  std::vector<SealedShare> boxes_;
  std::set<int32_t> answered_;
  std::map<int32_t, std::map<uint32_t, std::string>> seed_shares_,
      key_shares_;  // owner -> x -> share
  MaskStream stream_;
};

}  // namespace mt::secagg
