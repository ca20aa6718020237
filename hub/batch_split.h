#pragma once

#include <vector>

namespace mt {

// Splits `total` samples into integer batches proportional to `weights`
// (largest remainder), giving each at least 1 when total allows, so the
// batches always sum to exactly `total`: the global batch, and with it the
// optimisation, never changes.
std::vector<int> SplitBatch(int total, const std::vector<double>& weights);

}  // namespace mt
