#include "core/train/progress.h"

#include <algorithm>

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

}  // namespace mt
