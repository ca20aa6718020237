#include "core/train/progress.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace mt {

ProgressMeter::ProgressMeter(double every_seconds, int64_t total_steps, int64_t first_step)
    : every_seconds_(every_seconds),
      total_steps_(total_steps),
      first_step_(first_step),
      started_(Clock::now()),
      last_line_(started_) {}

bool ProgressMeter::Step(int64_t steps_done, int64_t samples) {
  samples_since_ += samples;
  const auto now = Clock::now();
  const double since = std::chrono::duration<double>(now - last_line_).count();
  if (since < every_seconds_) return false;
  rate_ = static_cast<double>(samples_since_) / std::max(since, 1e-9);
  const double per_step = std::chrono::duration<double>(now - started_).count() /
                          static_cast<double>(std::max<int64_t>(1, steps_done - first_step_));
  eta_ = per_step * static_cast<double>(std::max<int64_t>(0, total_steps_ - steps_done));
  samples_since_ = 0;
  last_line_ = now;
  return true;
}

std::string FormatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const auto s = static_cast<int64_t>(std::llround(seconds));
  char buf[48];
  if (s < 60)
    std::snprintf(buf, sizeof buf, "%llds", static_cast<long long>(s));
  else if (s < 3600)
    std::snprintf(buf, sizeof buf, "%lldm%02llds", static_cast<long long>(s / 60),
                  static_cast<long long>(s % 60));
  else
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", static_cast<long long>(s / 3600),
                  static_cast<long long>(s / 60 % 60));
  return buf;
}

}  // namespace mt
