// How long a step waits for its workers before it goes on without the late
// ones (who then sit out a while: hub/membership/quarantine.h): --step-deadline, or
// --deadline-factor times the recent pace with --deadline-floor below it.
// Per step, so a round of h local steps waits h times as long.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace mt {

// The settings (--step-deadline, --deadline-factor, --deadline-floor).
struct DeadlineSettings {
  // > 0: a step waits this long for every gradient; 0: adaptive, `factor`
  // times the recent step time but at least `floor_seconds`.
  double fixed_seconds = 0;
  double factor = 8;
  double floor_seconds = 3;
};

class StepDeadline {
 public:
  using Clock = std::chrono::steady_clock;

  explicit StepDeadline(const DeadlineSettings& s) : settings_(s) {}

  // The step was published at `now`.
  void Start(Clock::time_point now) {
    published_at_ = now;
    extension_ = Clock::duration::zero();
  }
  // The hub's own work inside the step (evaluation), not the workers'.
  void Extend(Clock::duration d) { extension_ += d; }
  Clock::time_point published_at() const { return published_at_; }

  // Seconds a round of `steps` steps may take; `full_state`: the full model
  // travels first to someone, which gets a floor more.
  double Seconds(int64_t steps, bool full_state) const {
    const double h = static_cast<double>(steps);
    const DeadlineSettings& s = settings_;
    const double d =
        s.fixed_seconds > 0 ? s.fixed_seconds * h : std::max(s.floor_seconds, s.factor * pace_ * h);
    return full_state ? d + s.floor_seconds : d;
  }
  Clock::time_point Deadline(int64_t steps, bool full_state) const {
    return published_at_ + extension_ +
           std::chrono::duration_cast<Clock::duration>(
               std::chrono::duration<double>(Seconds(steps, full_state)));
  }
  // A whole round's seconds per step: the pace the adaptive deadline follows.
  void ObservePace(double seconds_per_step) {
    pace_ = pace_ > 0 ? 0.8 * pace_ + 0.2 * seconds_per_step : seconds_per_step;
  }

 private:
  const DeadlineSettings settings_;
  double pace_ = 0;  // recent seconds per step
  Clock::time_point published_at_;
  Clock::duration extension_{};
};

}  // namespace mt
