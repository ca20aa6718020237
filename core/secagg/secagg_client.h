#pragma once
// A worker's side of secure aggregation. Per epoch (the object's life) a
// box key pair for sealing shares; per round a fresh mask key pair and self
// seed, so revealing a dropped worker's mask key exposes no other round.
// Its update goes out as
//   y = Encode(w x) + PRG(self seed) + sum_{j > me} PRG(pair j) - sum_{j < me} PRG(pair j)
// in the ring of fixed_point.h: the pair masks cancel in the sum over all
// members, the hub removes the self masks of the survivors and the pair
// masks of the dropped from the shares the survivors reveal.
#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "core/secagg/fixed_point.h"
#include "core/secagg/mask_stream.h"
#include "core/secagg/round_types.h"
#include "core/secagg/shamir.h"

namespace mt::secagg {

class SecAggClient {
 public:
  SecAggClient(int32_t id, uint64_t epoch, FixedPoint fixed_point = {});

  int32_t id() const { return id_; }
  const Key32& box_public() const { return box_.public_key(); }

  // Starts round `round`: a fresh mask key pair and self seed. Returns the
  // mask public key for the hub to pass on.
  Key32 Advertise(uint64_t round);

  // The round's members (ascending ids, this worker among them, each at
  // place index + 1 for the shares) and threshold: agrees the pair mask
  // keys and returns its mask private key and self seed shared among the
  // members, sealed for each other member. Throws on a roster that is not
  // ascending, lacks this worker or is smaller than the threshold.
  std::vector<SealedShare> ShareSecrets(const std::vector<Member>& roster, int threshold);

  // out[k] = the masked encoding of values[k] * weight, for parameters
  // [first, first + n).
  void Mask(uint64_t first, const float* values, size_t n, double weight, uint32_t* out);

  // The hub's unmasking request: who it counts as survivors and as dropped,
  // and the boxes addressed to this worker. Opens them and returns its
  // shares: of each survivor's self seed (its own included) and of each
  // dropped member's mask key. Throws (revealing nothing) when the request
  // cannot be honest: fewer survivors than the threshold, a member named in
  // both lists or outside the round, this worker named as dropped, or a box
  // of the wrong kind for its owner's list.
  std::vector<RevealedShare> Reveal(const std::vector<int32_t>& survivors,
                                    const std::vector<int32_t>& dropped,
                                    const std::vector<SealedShare>& boxes);

 private:
  int32_t id_;
  uint64_t epoch_;
  FixedPoint fixed_point_;
  KeyPair box_;
  uint64_t round_ = 0;
  KeyPair mask_;
  Key32 self_seed_{};
  int threshold_ = 0;
  bool revealed_ = false;
  std::vector<Member> roster_;
  std::map<int32_t, Key32> pair_mask_keys_;  // by peer id
  std::map<int32_t, Key32> box_keys_;        // by peer id, for this epoch
  Share own_seed_share_, own_key_share_;     // this worker's place in its own secrets
  MaskStream stream_;
};

}  // namespace mt::secagg
