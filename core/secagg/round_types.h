#pragma once
// What the workers and the hub pass each other in secure aggregation
// (Bonawitz et al., CCS 2017), as plain values: the transport maps them to
// proto/hub.proto.
#include <cstdint>
#include <string>
#include <vector>

#include "core/secagg/pair_keys.h"
#include "core/secagg/share_box.h"

namespace mt::secagg {

// A worker that holds shares: its number and its epoch's box key (shares
// are sealed under keys agreed from it; never revealed). Its place in
// every secret it holds a share of is id + 1.
struct Holder {
  int32_t id = 0;
  Key32 box_public{};
};

// A member of a round: a holder, and the mask key of the bundle it takes
// the round with (its private half is shared, and rebuilt by the hub if
// the member drops).
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
  uint64_t seq = 0;  // the bundle it belongs to (BoxLabel::seq)
  std::string box;
};

// What a worker sends ahead of a round it may take part in: a fresh mask
// key, and its private half and a fresh self seed shared among the
// holders, sealed for each of the others.
struct Bundle {
  Key32 mask_public{};
  std::vector<SealedShare> boxes;
};

// A share opened for the hub: the holder's share of `owner`'s secret.
struct RevealedShare {
  int32_t owner = 0;
  ShareKind kind = ShareKind::kSelfSeed;
  std::string share;  // SerializeShare
};

// The threshold for n members: a majority, so any t survivors can unmask
// and the hub needs more than half of the members to answer. Every member
// when there are two or fewer.
inline int DefaultThreshold(int members) { return members <= 2 ? members : members / 2 + 1; }

inline uint32_t PlaceOf(int32_t id) { return static_cast<uint32_t>(id) + 1; }

}  // namespace mt::secagg
