#include "hub/policy/sync_period.h"

#include <algorithm>
#include <cmath>

namespace mt {
double SmoothEstimate(double estimate, double sample) {
  constexpr double kSmoothing = 0.3;  // a new round's weight
  return estimate < 0 ? sample : (1 - kSmoothing) * estimate + kSmoothing * sample;
}

double RoundExchangeMs(double round_ms, double compute_ms, double seen_ms, bool overlapped) {
  return overlapped && seen_ms >= 0 && std::isfinite(seen_ms)
             ? seen_ms
             : std::max(0.0, round_ms - compute_ms);
}

int SyncPeriod::AutoRoundCeiling(OptimizerKind kind) {
  return kind == OptimizerKind::kAdam ? 4 : kMax;
}

SyncPeriod::SyncPeriod(int fixed, bool overlap, int ceiling)
    : automatic_(fixed <= 0),
      overlap_(overlap),
      ceiling_(std::clamp(ceiling, 1, kMax)),
      steps_(fixed <= 0 ? 1 : fixed),
      local_(fixed > 1) {}

bool SyncPeriod::SetSoleParticipant(bool sole) {
  sole_ = sole;
  if (sole || !automatic_ || steps_ <= ceiling_) return false;
  steps_ = ceiling_;
  rounds_at_current_ = 0;
  damping_ = ChangeDamping{};
  return true;
}

void SyncPeriod::ChangeDamping::Add(double exchange, double step_compute) {
  exchange_ms[next] = exchange;
  step_compute_ms[next] = step_compute;
  next = (next + 1) % kWindow;
  count = std::min(count + 1, kWindow);
}

double SyncPeriod::ChangeDamping::Median(const std::array<double, kWindow>& values) const {
  std::array<double, kWindow> sorted = values;
  // Not std::sort: GCC 12 warns (-Warray-bounds) on its insertion sort of 5.
  std::partial_sort(sorted.begin(), sorted.begin() + count, sorted.begin() + count);
  return sorted[static_cast<size_t>(count / 2)];
}

int SyncPeriod::Direction(int target) const {
  if (target >= 2 * steps_) return 1;
  if (2 * target <= steps_) return -1;
  return 0;
}

bool SyncPeriod::Observe(int64_t steps, double round_ms, double compute_ms, double seen_ms) {
  if (!automatic_ || steps < 1 || !(round_ms > 0) || !(compute_ms >= 0)) return false;
  const double exchange = RoundExchangeMs(round_ms, compute_ms, seen_ms, overlapped());
  const double step_compute = compute_ms / static_cast<double>(steps);
  exchange_ms_ = SmoothEstimate(exchange_ms_, exchange);
  step_compute_ms_ = SmoothEstimate(step_compute_ms_, step_compute);
  if (steps_ == 1) per_step_exchange_ms_ = exchange_ms_;
  damping_.dwell_ms += round_ms;
  damping_.Add(exchange, step_compute);
  if (++rounds_at_current_ < settle_.rounds()) return false;
  const int target = Target(exchange_ms_, step_compute_ms_);
  const int direction = Direction(target);
  // The median of the latest rounds must call for the same: a stalled
  // round or two (a busy machine) move the smoothed estimate, not it.
  const bool confirmed = damping_.count >= kConfirmRounds &&
                         Direction(Target(damping_.Median(damping_.exchange_ms),
                                          damping_.Median(damping_.step_compute_ms))) == direction;
  const bool dwelt = last_direction_ == 0 || damping_.dwell_ms >= kMinDwellMs;
  if (direction == 0) {
    settle_.Kept(rounds_at_current_);
    return false;
  }
  if (!confirmed || !dwelt) return false;  // held back, not a quiet spell
  settle_.Changed(direction == -last_direction_);
  last_direction_ = direction;
  steps_ = target;
  local_ = local_ || steps_ > 1;
  rounds_at_current_ = 0;
  damping_ = ChangeDamping{};
  return true;
}

int SyncPeriod::Target(double exchange_ms, double step_compute_ms) const {
  // Into the exact mode below kFastExchangeMs, out of rounds only below half
  // of it: an exchange near the line would otherwise flip H between 1 and
  // a dozen (seen over Wi-Fi once topk made the exchange ~15-30 ms).
  if (exchange_ms < (steps_ > 1 ? kFastExchangeMs / 2 : kFastExchangeMs)) {
    // A round can hide a slow worker's share of the exchange behind its
    // compute: a pair with a 5x-slower phone measured 5.9-9.9 ms a round at
    // H 4 where its per-step exchanges measured 41-75 ms, and went back and
    // forth. Back to per-step exchanges only when they were well within the
    // line too. (Also when the rounds' exchange fell to a tenth of theirs
    // was tried, for a network that got fast: the pair's 5.9 ms against
    // 64 ms passed it and spent 60 steps per-step at 33 ms an exchange.
    // Such a network is left to the rule below, which shortens the rounds.)
    const bool per_step_fast = per_step_exchange_ms_ >= 0
                                   ? per_step_exchange_ms_ < kFastExchangeMs / 2
                                   : lossless_;  // unmeasured (see ForgetExchange)
    // The exact mode is worth its exchanges only while it is exact: under
    // a lossy encoding a per-step exchange under the line is no cheaper a
    // share of the step. Three phones over shared 32 Mbit/s went to topk at
    // step 2, measured 15-19 ms per-step exchanges against 25 ms of
    // compute, stayed per-step for the whole run and reached 0.85 at 0.81x
    // one phone alone (2.04x its samples, 1.67x its samples/s).
    if ((steps_ == 1 && lossless_) || per_step_fast) return 1;
  }
  // exchange / (exchange + H * compute) <= share
  //   <=>  H >= exchange * (1 - share) / (share * compute)
  const double compute = std::max(step_compute_ms, 1e-3);
  const double h = std::ceil(exchange_ms * (1 - kExchangeShare) / (kExchangeShare * compute));
  return static_cast<int>(std::clamp(h, 1.0, static_cast<double>(sole_ ? kMax : ceiling_)));
}

}  // namespace mt
