#include "hub/membership/churn_log.h"

#include "core/util/rate_limited_log.h"

namespace mt {

void LogChurn(spdlog::level::level_enum level, const std::string& line) {
  static RateLimitedLog limit(std::chrono::minutes(1), kChurnLinesPerMinute);
  int64_t left_out = 0;
  if (!limit.ShouldLog(&left_out)) return;
  if (left_out == 0)
    spdlog::log(level, "{}", line);
  else
    spdlog::log(level, "{} ({} more lines of workers joining and going left out)", line, left_out);
}

}  // namespace mt
