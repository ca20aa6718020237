#include "hub/policy/compression_choice.h"

#include <algorithm>
#include <cmath>

namespace mt {
namespace {

// Least lossy first.
constexpr Compression kLadder[CompressionChoice::kEncodings] = {
    Compression::kNone, Compression::kFp16, Compression::kInt8, Compression::kTopK};

int Rank(Compression c) {
  for (int i = 0; i < CompressionChoice::kEncodings; ++i)
    if (kLadder[i] == c) return i;
  return 0;
}

}  // namespace

double CompressionChoice::BytesPerValue(Compression c) {
  constexpr size_t kLong = size_t{1} << 20;
  return static_cast<double>(EncodedBytes(c, kLong)) / kLong;
}

CompressionChoice::CompressionChoice(std::optional<Compression> fixed, int64_t warmup_steps)
    : automatic_(!fixed),
      current_(fixed.value_or(Compression::kNone)),
      warmup_steps_(warmup_steps),
      warming_(warmup_steps > 0) {
  std::fill(std::begin(measured_ms_), std::end(measured_ms_), -1.0);
  std::fill(std::begin(measured_round_), std::end(measured_round_), int64_t{0});
}

double CompressionChoice::BudgetMs() const {
  // exchange / (exchange + kRoundSteps * compute) <= share
  const double compute = std::max(step_compute_ms_, 0.0);
  return std::max(kFastExchangeMs, kExchangeShare / (1 - kExchangeShare) * kRoundSteps * compute);
}

bool CompressionChoice::Observe(double exchange_ms, double step_compute_ms) {
  if (!automatic_ || !(exchange_ms >= 0) || !std::isfinite(exchange_ms) ||
      !(step_compute_ms >= 0) || !std::isfinite(step_compute_ms))
    return false;
  ++rounds_seen_;
  measured_round_[Rank(current_)] = rounds_seen_;
  double& at_current = measured_ms_[Rank(current_)];
  // Measured afresh at each change: the rounds before it were another link.
  recent_ms_[rounds_at_current_ % kRecentRounds] = exchange_ms;
  const int n = std::min(rounds_at_current_ + 1, kRecentRounds);
  double sorted[kRecentRounds];
  std::copy(recent_ms_, recent_ms_ + n, sorted);
  // Not std::sort: GCC 12 warns (-Warray-bounds) on its insertion sort of 5.
  std::partial_sort(sorted, sorted + n, sorted + n);
  at_current = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  step_compute_ms_ = SmoothEstimate(step_compute_ms_, step_compute_ms);
  const bool far_over = at_current > kFarOverBudget * BudgetMs();
  if (++rounds_at_current_ < settle_.rounds() && !far_over) return false;
  const Compression target = Target();
  // Far over the budget decides early only towards a stronger encoding: one
  // slow round at topk had sent three phones back to int8 for good.
  if (rounds_at_current_ < settle_.rounds() && Rank(target) <= Rank(current_)) return false;
  if (target == current_) {
    settle_.Kept(rounds_at_current_);
    return false;
  }
  settle_.Changed(left_ == target);
  decided_exchange_ms_ = at_current;
  decided_budget_ms_ = BudgetMs();
  left_ = current_;
  current_ = target;
  rounds_at_current_ = 0;
  return true;
}

Compression CompressionChoice::Capped(Compression c) const {
  return warming_ && Rank(c) > Rank(Compression::kFp16) ? Compression::kFp16 : c;
}

double CompressionChoice::exchange_ms() const { return measured_ms_[Rank(current_)]; }

CompressionChoice::LinkModel CompressionChoice::Fit() const {
  // Least squares of exchange = latency + per_byte * bytes a value, over
  // the encodings measured so far.
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (int i = 0; i < kEncodings; ++i) {
    if (measured_ms_[i] < 0 || rounds_seen_ - measured_round_[i] > kFigureLifetimeRounds) continue;
    const double x = BytesPerValue(kLadder[i]), y = measured_ms_[i];
    n += 1, sx += x, sy += y, sxx += x * x, sxy += x * y;
  }
  const double at_current = exchange_ms();
  if (n < 2) return {0, at_current / BytesPerValue(current_)};  // all bytes until shown otherwise
  const double per_byte = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  if (per_byte <= 0) return {sy / n, 0};  // fewer bytes did not make it faster
  const double latency = (sy - per_byte * sx) / n;
  if (latency < 0) return {0, at_current / BytesPerValue(current_)};
  return {latency, per_byte};
}

Compression CompressionChoice::Target() const {
  const LinkModel link = Fit();
  double predicted[kEncodings];
  for (int i = 0; i < kEncodings; ++i)
    predicted[i] = link.latency_ms + link.ms_per_byte * BytesPerValue(kLadder[i]);
  const double best = *std::min_element(std::begin(predicted), std::end(predicted));
  // Within the budget, or (on a link whose cost is mostly latency, which no
  // encoding removes) near the best any encoding can do.
  // Hysteresis both ways, so a noisy measurement moves nothing: back to a
  // less lossy encoding only with room to spare in the budget, and away
  // from the current one only when it is clearly further from the best.
  const int now = Rank(current_);
  for (int i = 0; i < kEncodings; ++i) {
    const double limit = i < now    ? std::max(BudgetMs() / 2, kNearBest * best)
                         : i == now ? std::max(BudgetMs(), kNearBest * kNearBest * best)
                                    : std::max(BudgetMs(), kNearBest * best);
    if (predicted[i] <= limit) return Capped(kLadder[i]);
  }
  return Capped(kLadder[kEncodings - 1]);
}

}  // namespace mt
