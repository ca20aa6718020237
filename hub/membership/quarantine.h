// How long a worker left out of a step sits out before it is taken back.
// An honest worker misses a deadline now and then (a hiccup, a slow
// network) and comes straight back; one left out again and again (the
// pattern of a peer that goes silent on purpose, which made every step wait
// for the deadline and slowed a run 11x) sits out longer each time, so the
// steps it can delay grow only with the logarithm of the run's length.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace mt {

struct Quarantine {
  // The first leave-out costs nothing; from the second on: 10 s, 20 s,
  // 40 s, ... at most 10 minutes.
  static constexpr std::chrono::seconds kFirst{10};
  static constexpr std::chrono::seconds kLongest{600};
  // Steps taken part in since the last leave-out after which it is forgotten.
  static constexpr int64_t kForgiveAfterSteps = 100;

  static std::chrono::seconds For(int strikes) {
    if (strikes <= 1) return std::chrono::seconds(0);
    const int doublings = std::min(strikes - 2, 16);
    return std::min(kLongest, kFirst * (int64_t{1} << doublings));
  }
};

// One worker's record: leave-outs not yet forgiven, the steps taken part in
// since the last, whether its late gradient is whole (it may come back),
// and not before when.
struct QuarantineRecord {
  using Clock = std::chrono::steady_clock;

  int strikes = 0;
  int64_t steps_since_strike = 0;
  bool back_ready = false;
  Clock::time_point until;

  // Left out of a step at `now`: it sits out Quarantine::For its strikes.
  void Strike(Clock::time_point now) {
    ++strikes;
    steps_since_strike = 0;
    back_ready = false;
    until = now + Quarantine::For(strikes);
  }
  // It finished a round of `steps` steps: enough of them forgive it.
  void TookPart(int64_t steps) {
    steps_since_strike += steps;
    if (steps_since_strike >= Quarantine::kForgiveAfterSteps) strikes = 0;
  }
  // Whether a late worker may take part again at `now`.
  bool MayReturn(Clock::time_point now) const { return back_ready && now >= until; }
};

}  // namespace mt
