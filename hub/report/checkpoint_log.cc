#include "hub/report/checkpoint_log.h"

#include <fmt/format.h>

namespace mt {

CheckpointLog::Line CheckpointLog::Written(int64_t step, const std::string& path,
                                           Clock::time_point now) {
  ++count_;
  last_step_ = step;
  last_path_ = path;
  Line line{fmt::format("checkpoint {} at step {}: {}", count_, step, path), false};
  if (!last_info_ || now - *last_info_ >= kInfoEvery) {
    line.info = true;
    last_info_ = now;
  }
  return line;
}

std::string CheckpointLog::Summary() const {
  if (count_ == 0) return "";
  return fmt::format("{} checkpoint{} written, the last at step {}: {}", count_,
                     count_ == 1 ? "" : "s", last_step_, last_path_);
}

}  // namespace mt
