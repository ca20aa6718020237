#include "hub/monitor/histogram.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace mt {

FixedHistogram::FixedHistogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)), counts_(bounds_.size(), 0) {
  for (size_t i = 0; i < bounds_.size(); ++i) {
    if (!std::isfinite(bounds_[i]))
      throw std::invalid_argument("histogram: bucket bounds must be finite (+Inf is implicit)");
    if (i > 0 && bounds_[i] <= bounds_[i - 1])
      throw std::invalid_argument("histogram: bucket bounds must be strictly ascending");
  }
}

void FixedHistogram::Observe(double value) {
  if (!std::isfinite(value)) return;
  const auto it = std::lower_bound(bounds_.begin(), bounds_.end(), value);
  if (it != bounds_.end()) ++counts_[static_cast<size_t>(it - bounds_.begin())];
  ++count_;
  sum_ += value;
}

std::vector<int64_t> FixedHistogram::Cumulative() const {
  std::vector<int64_t> out(counts_.size());
  int64_t running = 0;
  for (size_t i = 0; i < counts_.size(); ++i) out[i] = running += counts_[i];
  return out;
}

std::vector<double> FixedHistogram::SecondsBuckets() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120};
}

}  // namespace mt
