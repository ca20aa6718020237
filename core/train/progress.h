// Progress of a run for its log: at most one line per interval, with the
// rate since the last line and an ETA from the pace of the run so far
// (which one slow step or an evaluation does not swing).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace mt {

class ProgressMeter {
 public:
  // `total_steps` ends the run; `first_step` is where this process began.
  ProgressMeter(double every_seconds, int64_t total_steps, int64_t first_step);

  // After each step: true when a line is due (then the readings below
  // describe the interval that just closed).
  bool Step(int64_t steps_done, int64_t samples);

  double samples_per_second() const { return rate_; }
  double eta_seconds() const { return eta_; }

 private:
  using Clock = std::chrono::steady_clock;
  double every_seconds_;
  int64_t total_steps_, first_step_;
  Clock::time_point started_, last_line_;
  int64_t samples_since_ = 0;
  double rate_ = 0, eta_ = 0;
};

// A duration for people: "42s", "3m05s", "2h07m".
std::string FormatDuration(double seconds);

}  // namespace mt
