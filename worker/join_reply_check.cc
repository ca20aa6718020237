#include "worker/join_reply_check.h"

#include <stdexcept>
#include <string>

namespace mt {
namespace {

void Require(bool ok, const std::string& what, int64_t value) {
  if (!ok)
    throw std::runtime_error("hub sent a malformed join reply: " + what + " " +
                             std::to_string(value));
}

}  // namespace

void CheckJoinReply(const proto::JoinReply& join) {
  Require(join.worker_id() >= 0, "worker id", join.worker_id());
  Require(join.global_batch() >= 1 && join.global_batch() <= kMaxWorkerBatch, "global batch",
          join.global_batch());
  Require(join.max_batch() >= 0 && join.max_batch() <= kMaxWorkerBatch, "max batch",
          join.max_batch());
  Require(join.digest_every() >= 0, "digest every", join.digest_every());
  Require(join.param_count() >= 1, "parameter count", static_cast<int64_t>(join.param_count()));
  Require(join.segments_size() >= 1, "segment count", join.segments_size());
}

}  // namespace mt
