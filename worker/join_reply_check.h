// What a worker accepts from a hub before it builds anything: a hub (or
// anyone on the path) may be hostile, so a join reply is checked as
// strictly as the hub checks what workers send it. Throws
// std::runtime_error naming the first field out of range.
#pragma once

#include "hub.pb.h"

namespace mt {

// The largest batch a hub may ask one worker to hold (the hub's own
// --global-batch bound).
constexpr int kMaxWorkerBatch = 1 << 24;

void CheckJoinReply(const proto::JoinReply& join);

}  // namespace mt
