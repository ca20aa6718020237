#pragma once

#include <vector>

namespace mt {

// Splits `total` samples into integer batches near `targets` (any scale:
// they are read as proportions), each at most caps[i] (no caps when empty)
// and at least 1 when total allows. The batches sum to exactly `total`, so
// the global batch, and with it the optimisation, never changes; only when
// the caps together hold less than `total` do they sum to the caps' sum.
std::vector<int> SplitBatch(int total, const std::vector<double>& targets,
                            const std::vector<int>& caps = {});

}  // namespace mt
