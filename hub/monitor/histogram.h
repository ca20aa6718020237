// A histogram with fixed bucket bounds, as Prometheus exposes them: each
// observation is counted in the first bucket whose upper bound holds it;
// read cumulatively, bucket i counts every observation <= bound i and the
// implicit +Inf bucket counts them all. Observing never allocates, so the
// run thread can feed it every step.
#pragma once

#include <cstdint>
#include <vector>

namespace mt {

class FixedHistogram {
 public:
  // `upper_bounds`: finite and strictly ascending (throws otherwise).
  explicit FixedHistogram(std::vector<double> upper_bounds);

  // Non-finite values are not counted: they have no bucket, and would turn
  // the sum into NaN for the rest of the run.
  void Observe(double value);

  const std::vector<double>& bounds() const { return bounds_; }
  // [i]: observations <= bounds()[i]; the +Inf bucket is count().
  std::vector<int64_t> Cumulative() const;
  int64_t count() const { return count_; }
  double sum() const { return sum_; }

  // Durations from 1 ms to 2 minutes, for step times and waits.
  static std::vector<double> SecondsBuckets();

 private:
  std::vector<double> bounds_;
  std::vector<int64_t> counts_;  // per bucket, not cumulative; one per bound
  int64_t count_ = 0;
  double sum_ = 0;
};

}  // namespace mt
