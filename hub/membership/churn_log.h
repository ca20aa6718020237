// Workers joining and going are a peer's to cause at will (Join, Hello,
// close, again and again): their log lines are written while they are few,
// at most kChurnLinesPerMinute a minute, and the next one written counts
// those left out, so churn cannot fill the disk. The report and --events
// keep the counts.
#pragma once

#include <spdlog/spdlog.h>

#include <string>

namespace mt {

constexpr int kChurnLinesPerMinute = 60;

void LogChurn(spdlog::level::level_enum level, const std::string& line);

}  // namespace mt
