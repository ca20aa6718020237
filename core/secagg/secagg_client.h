#pragma once
// A worker's side of secure aggregation. For the epoch (the object's life)
// a box key pair for sealing shares; for each round it takes part in a
// fresh mask key pair and self seed, sent ahead as a Bundle so the round
// itself costs no extra exchange, and used for one round only, so
// revealing a dropped worker's mask key exposes no other round. Its update
// goes out as
//   y = Encode(w x) + PRG(self seed) + sum_{j > me} PRG(pair j) - sum_{j < me} PRG(pair j)
// in the ring of fixed_point.h: the pair masks cancel in the sum over the
// round's members, and the hub removes the survivors' self masks and the
// dropped members' pair masks from the shares the survivors reveal.
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
  // `threshold`: how many shares rebuild a secret (the run's, from the hub).
  SecAggClient(int32_t id, uint64_t epoch, int threshold, FixedPoint fixed_point = {});

  int32_t id() const { return id_; }
  const Key32& box_public() const { return box_.public_key(); }

  // A bundle for a round this worker takes part in, shared among `holders`
  // (this worker among them, with its own box key). The last few bundles
  // not yet used stay ready (the hub may begin a round with one sent
  // before the latest). Throws when the holders are fewer than the
  // threshold, repeat an id, or lack this worker.
  Bundle PrepareBundle(const std::vector<Holder>& holders);

  // Round `round` over `roster` (ascending ids; this worker among them
  // with the mask key of one of its ready bundles, whose holders include
  // every member; no peer with a mask key of an earlier round): agrees the
  // pair mask keys. Uses that bundle and every older one up: a mask key
  // masks one round.
  void BeginRound(uint64_t round, const std::vector<Member>& roster);

  // out[k] = the masked encoding of values[k] * weight, for parameters
  // [first, first + n).
  void Mask(uint64_t first, const float* values, size_t n, double weight, uint32_t* out);

  // The hub's unmasking request: who it counts as survivors and as
  // dropped, and the boxes addressed to this worker. Opens them and
  // returns its shares: of each survivor's self seed (its own included)
  // and of each dropped member's mask key. Throws (revealing nothing) when
  // the request cannot be honest: fewer survivors than the threshold, a
  // member named twice or left out, anyone outside the round, this worker
  // named as dropped, a box of the wrong kind for its owner's list, or a
  // second request in the round.
  std::vector<RevealedShare> Reveal(const std::vector<int32_t>& survivors,
                                    const std::vector<int32_t>& dropped,
                                    const std::vector<SealedShare>& boxes);

 private:
  const Key32& BoxKey(int32_t peer, const Key32& peer_box_public);

  int32_t id_;
  uint64_t epoch_;
  int threshold_;
  FixedPoint fixed_point_;
  KeyPair box_;
  std::map<int32_t, std::pair<Key32, Key32>> box_keys_;  // peer -> (its box key, our pair key)
  uint64_t seq_ = 0;                                     // bundles made
  struct Secrets {
    KeyPair mask;
    Key32 self_seed{};
    Share own_seed_share;  // its own key share is never revealed: not kept
    std::vector<int32_t> holders;
  };
  static constexpr size_t kReadyBundles = 4;
  std::map<uint64_t, Secrets> ready_;  // by bundle number
  Secrets round_secrets_;              // the round's
  // The round.
  uint64_t round_ = 0;
  std::vector<Member> roster_;
  std::map<int32_t, Key32> pair_mask_keys_;  // by peer id
  // Peers' mask keys of past rounds: a hub that hands one out again (to
  // have an old round's key share revealed) is refused. 8 bytes a key.
  std::set<uint64_t> peer_mask_keys_seen_;
  bool revealed_ = false;
  MaskStream stream_;
};

}  // namespace mt::secagg
