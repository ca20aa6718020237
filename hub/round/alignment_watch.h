// --aggregate auto with 3+ workers: how each worker's contribution lines up
// with the sum of the others', summed over a step's segments into a cosine
// and smoothed over steps. Honest workers on the same data agree a little
// (> 0) or, beside a hostile one, not at all (~0); a sign flip disagrees
// with both honest ones, and shows up here long before any one step can
// tell it from noise. Pure: keyed by worker id, no messages, no clocks.
#pragma once

#include <cstddef>
#include <vector>

#include "hub/aggregation/robust_aggregate.h"

namespace mt {

class AlignmentWatch {
 public:
  // A worker whose smoothed cosine stays below -kBound after kMinSteps
  // steps is refused.
  static constexpr double kSmoothing = 0.1;
  static constexpr int kMinSteps = 10;
  static constexpr double kBound = 0.2;

  // A new step: this step's sums start again (its running cosine stays).
  void BeginStep();
  // One segment's alignment of worker `id` (RobustAggregator::alignment).
  // Allocates only for an id never seen before.
  void Add(int id, const RobustAggregator::Alignment& a);
  // At the step's last segment, for each of ids[0..n): folds the step's
  // cosine into its running one. Returns the index into ids of the worker
  // that keeps pulling against the others the most, or -1.
  int EndStep(const int* ids, size_t n);
  // Its smoothed cosine (0 before any step).
  double cosine(int id) const;

 private:
  struct Entry {
    double dot = 0, self = 0, others = 0;  // this step's, over its segments
    double cosine = 0;
    int steps = 0;
  };
  Entry& At(int id);

  std::vector<Entry> entries_;  // index = worker id
};

}  // namespace mt
