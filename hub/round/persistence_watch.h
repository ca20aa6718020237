// --aggregate auto with 3+ workers on the same data: how much of each
// worker's residual from the robust centre keeps one direction across
// steps. An honest worker's residual is its batch's noise, which points
// anywhere from one step to the next and averages away; a worker that adds
// a constant vector (even one of only its gradient's norm, which stays
// inside every clip radius and near zero cosine with the others) leaves
// the same vector in every residual, and a long mean keeps it. Measured
// over the count sketches of hub/aggregation/robust_aggregate.h (kSketchSize floats a
// worker, not the model's size), smoothed over steps:
//
//   persistence = |mean residual|^2 / mean |residual|^2
//
// about kSmoothing / (2 - kSmoothing) for noise, towards 1 for a constant.
// Pure: keyed by worker id, no messages, no clocks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "hub/aggregation/robust_aggregate.h"

namespace mt {

class PersistenceWatch {
 public:
  static constexpr size_t kBuckets = RobustAggregator::kSketchSize;
  // The weight of a step in the running means: a memory of ~1/kSmoothing
  // steps, a noise floor of kSmoothing / (2 - kSmoothing) ~ 0.026.
  static constexpr double kSmoothing = 0.05;
  // A worker whose persistence is above kBound after kMinSteps steps, and
  // kRatio times the median of the step's workers', is refused.
  static constexpr int kMinSteps = 30;
  static constexpr double kBound = 0.15;
  static constexpr double kRatio = 3;

  // A new step: this step's sums start again (the running means stay).
  // Constant time: a worker's sums are cleared when the step first touches
  // them, not for every worker ever seen.
  void BeginStep() { ++step_; }
  // One segment's residual of worker `id`: its sketch (kBuckets floats)
  // and squared norm. Allocates only for an id never seen before.
  void Add(int id, const float* sketch, double energy);
  // At the step's last segment, for each of ids[0..n): folds the step into
  // its running means. Returns the index into ids of the worker whose
  // residual keeps its direction the most, beyond the bounds, or -1.
  // Allocates nothing once n workers were seen.
  int EndStep(const int* ids, size_t n);
  // Its persistence now, and the highest it reached (0 before any step).
  double persistence(int id) const;
  double peak(int id) const;

 private:
  struct Entry {
    std::vector<double> step, mean;  // kBuckets each: this step's, the running mean
    double step_energy = 0, energy = 0;
    double weight = 0;  // of the running means: 1 - (1 - kSmoothing)^steps
    double persistence = 0, peak = 0;
    int steps = 0;
    uint64_t summed_in = 0;  // the step `step` and step_energy belong to
  };
  Entry& At(int id);
  // At(id), with its step sums cleared if they are from an earlier step.
  Entry& InThisStep(int id);

  uint64_t step_ = 1;            // BeginStep's count (0: no entry's sums)
  std::vector<Entry> entries_;   // index = worker id
  std::vector<double> scratch_;  // the step's persistences, for their median
};

}  // namespace mt
