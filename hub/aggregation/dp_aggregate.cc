#include "hub/aggregation/dp_aggregate.h"

#include <cmath>

namespace mt {

DpAggregate::DpAggregate(const DpSettings& s, int workers)
    : settings_(s), workers_(workers), accountant_(1, s.noise_multiplier) {}

void DpAggregate::OnCombined(float* values, size_t n, double max_weight, bool first) {
  if (!enabled()) return;
  if (first) rounds_.fetch_add(1, std::memory_order_relaxed);
  if (settings_.noise_at == DpNoiseAt::kHub)
    noise_.Add(values, n, settings_.noise_multiplier * settings_.clip * max_weight);
}

proto::DifferentialPrivacy DpAggregate::ForWorkers() const {
  proto::DifferentialPrivacy p;
  if (!enabled()) return p;
  p.set_clip(settings_.clip);
  // Each worker's share: n shares of variance (sigma C)^2 / n sum to the
  // run's noise on the sum.
  if (settings_.noise_at == DpNoiseAt::kWorkers)
    p.set_noise_stddev(settings_.noise_multiplier * settings_.clip /
                       std::sqrt(static_cast<double>(workers_)));
  return p;
}

double DpAggregate::epsilon() const {
  if (!enabled()) return 0;
  dp::Accountant spent = accountant_;
  spent.AddRounds(rounds());
  return spent.EpsilonAt(settings_.delta);
}

}  // namespace mt
