// What a worker accepts from a hub before it builds anything: a hub (or
// anyone on the path) may be hostile, so a join reply is checked as
// strictly as the hub checks what workers send it. Throws
// std::runtime_error naming the first field out of range.
#pragma once

#include <string>
#include <vector>

#include "hub.pb.h"

namespace mt {

// The largest batch a hub may ask one worker to hold (the hub's own
// --global-batch bound).
constexpr int kMaxWorkerBatch = 1 << 24;

void CheckJoinReply(const proto::JoinReply& join);

// The hub names the dataset a worker opens; a worker opens only a known
// name (core/data) or a directory under one it allows (--allow-data), so a
// hostile hub cannot make it read, say, /home. Paths are compared after
// resolving "..", symbolic links and relative parts. Throws
// std::runtime_error saying what to allow.
void CheckHubDataset(const std::string& dataset, const std::vector<std::string>& allowed_dirs);

// "DIR:DIR:..." (MT_ALLOW_DATA, the C API's allow_data_dirs) as a list;
// empty parts are skipped. Null: none.
std::vector<std::string> SplitDirList(const char* colon_separated);

}  // namespace mt
