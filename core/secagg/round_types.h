#pragma once
// What the workers and the hub pass each other in a secure aggregation
// round (Bonawitz et al., CCS 2017), as plain values: the transport maps
// them to proto/hub.proto.
#include <cstdint>
#include <string>
#include <vector>

#include "core/secagg/pair_keys.h"
#include "core/secagg/share_box.h"

namespace mt::secagg {

// A member of a round: its epoch's box key (shares are sealed under keys
// agreed from it; never revealed) and the round's mask key (its private
// half is shared, and rebuilt by the hub if the member drops).
struct Member {
  int32_t id = 0;
  Key32 box_public{};
  Key32 mask_public{};
};

// A share of `from`'s secret for `to`, sealed under their pair's box key.
struct SealedShare {
  int32_t from = 0;
  int32_t to = 0;
  ShareKind kind = ShareKind::kSelfSeed;
  std::string box;
};

// A share opened for the hub: the holder's share of `owner`'s secret.
struct RevealedShare {
  int32_t owner = 0;
  ShareKind kind = ShareKind::kSelfSeed;
  std::string share;  // SerializeShare
};

// The threshold for n members: a majority, so any t survivors can unmask
// and fewer than half of them colluding with the hub cannot. At least 2,
// unless there is only one member.
inline int DefaultThreshold(int members) { return members <= 2 ? members : members / 2 + 1; }

}  // namespace mt::secagg
