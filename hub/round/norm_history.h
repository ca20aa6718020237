// Each worker's usual norm, per segment: a running mean over its own past
// contributions. The refusal of a contribution for its size compares it
// with the step's median norm AND with this: where the workers' data differ
// by design (mthub --partition), an honest worker whose classes the others
// pull away from has gradients far above the median that grew there step
// by step (issue 45: an honest worker refused at "134 times the median
// norm"), while a x1e4 or FLT_MAX contribution is a jump from its own
// history, or has none. Pure: keyed by worker id, no clocks.
#pragma once

#include <cstddef>
#include <vector>

namespace mt {

class NormHistory {
 public:
  // The weight of a step in the running mean: a memory of ~10 steps.
  static constexpr double kSmoothing = 0.1;

  explicit NormHistory(size_t segments) : segments_(segments) {}

  // Worker id's usual norm of `segment`; 0 before any.
  double usual(int id, size_t segment) const {
    const size_t i = static_cast<size_t>(id) * segments_ + segment;
    return i < usual_.size() ? usual_[i] : 0;
  }
  // Worker id sent `norm` for `segment`, and it was accepted. Allocates
  // only for an id never seen before.
  void Observe(int id, size_t segment, double norm) {
    const size_t i = static_cast<size_t>(id) * segments_ + segment;
    if (i >= usual_.size()) usual_.resize((static_cast<size_t>(id) + 1) * segments_, 0.0);
    usual_[i] = usual_[i] > 0 ? (1 - kSmoothing) * usual_[i] + kSmoothing * norm : norm;
  }

 private:
  size_t segments_;
  std::vector<double> usual_;  // [id * segments + segment]
};

}  // namespace mt
