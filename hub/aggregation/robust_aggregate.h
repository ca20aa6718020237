// How the hub combines the workers' contributions to one segment of a step
// (gradients, or a round's weight changes with --sync-every), so that one
// hostile or broken worker among honest ones cannot steer the model:
//
//   mean          sum_i w_i x_i with w_i the batch weights: the exact
//                 synchronous step (b_1..b_n give the weights of one process
//                 on all of them). No defence but the refusal below.
//   median        the coordinate-wise median; each worker one vote.
//   trimmed-mean  per coordinate, the mean after dropping the f largest and
//                 the f smallest values, f = max(1, (n - 1) / 4) from 3
//                 workers on (fewer: the mean).
//   auto          the default: each worker's norm clipped to clip_factor
//                 times the median norm (a x1e4 or FLT_MAX worker weighs no
//                 more than an honest one); from 3 workers on, then centred
//                 clipping around the coordinate-wise median m:
//                   m + sum_i w_i clip(x_i - m, clip_factor * median_i |x_i - m|)
//                 which is the batch-weighted mean exactly while nobody
//                 strays, and otherwise moves at most w_i times the radius
//                 towards any one worker (a sign flip cannot pull the step
//                 back as in a plain mean).
//
// With 3 or more workers an input whose norm is beyond refuse_factor times
// the median norm is refused outright (the caller drops its worker); with
// 2 there is no majority to tell which of them is wrong.
//
// Norms and distances are summed in double, so FLT_MAX values do not
// overflow. Only Reserve allocates: a steady step allocates nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mt {

enum class Aggregation { kAuto, kMean, kTrimmedMean, kMedian };
// Its command-line name ("auto", "mean", "trimmed-mean", "median").
const char* AggregationName(Aggregation a);

// ---- Pure functions over float spans. ----
double L2Norm(const float* x, size_t count);
// The lower median of values[0..n) (the smaller middle one for even n);
// reorders them. 0 for n == 0.
double LowerMedian(double* values, size_t n);
// Per coordinate j: the mean of scale[i] * x[i][j] after dropping the
// `trim` smallest and `trim` largest (2 * trim < n); scale may be null (1).
// `scratch` holds n floats. trim = (n - 1) / 2 is the median.
void CoordinateTrimmedMean(const float* const* x, const float* scale, size_t n, size_t trim,
                           size_t count, float* scratch, float* out);
// out[j] = sum_i w[i] * x[i][j].
void WeightedSum(const float* const* x, const float* w, size_t n, size_t count, float* out);
// The trim of trimmed-mean for n inputs.
size_t TrimOf(size_t n);

struct AggregatorOptions {
  Aggregation mode = Aggregation::kAuto;
  // auto: norms clipped to this times the median norm, and the radius of
  // the centred clipping this times the median distance to the centre.
  double clip_factor = 2;
  // An input this many times the median norm is refused (3+ workers).
  double refuse_factor = 100;
  // auto, 3+ workers: refuse a worker whose contributions keep pointing
  // against the others' (round/alignment_watch.h).
  bool refuse_misaligned = true;
  // auto, 3+ workers: sketch each input's residual from the centre, for
  // the persistence watch (round/persistence_watch.h) that refuses a worker
  // whose residual keeps one direction.
  bool sketch_residuals = true;
  // The workers' data differ by design (mthub --partition): honest
  // gradients point apart, each pushing up its own classes (measured: mean
  // cosines of -0.4 to -0.55 with Dirichlet 0.1), so the alignment watch,
  // where it is on, refuses only a worker that also stands apart from the
  // others' cosines (round/alignment_watch.h). The hub keeps it off there
  // all the same (hub/coordinator/step_coordinator.cc: an honest worker was
  // refused); the persistence watch stays on.
  bool data_differ = false;
  // The count sketch's signs. A hub draws its own (SketchSeedOf,
  // hub/aggregation/sketch_seed.h), so a worker cannot aim its residual at
  // the signs; this fixed default is for tests that build an aggregator
  // by hand.
  uint32_t sketch_seed = 0x5eed;
};

class RobustAggregator {
 public:
  explicit RobustAggregator(AggregatorOptions options = {}) : options_(options) {}

  const AggregatorOptions& options() const { return options_; }
  // Scratch for `inputs` inputs; allocates only when that grows.
  void Reserve(size_t inputs);

  struct Outcome {
    int refused = -1;    // an input refused, its index; out is then untouched
    double ratio = 0;    // its norm over the median norm
    bool finite = true;  // whether out is all finite
  };
  // Combines n inputs of `count` floats, batch weights w (summing to 1),
  // into out (which may not alias an input). `offset`: where the inputs
  // begin in the whole parameter vector (for the residual sketches).
  // `usual`: each input's usual norm from its own history (0: none;
  // null: no history at all): an input is refused for its norm only when
  // it is beyond refuse_factor times the median norm and, with a history,
  // as far beyond its own usual norm.
  Outcome Aggregate(const float* const* x, const float* w, size_t n, size_t count, float* out,
                    size_t offset = 0, const double* usual = nullptr);
  // Of the last Aggregate: input i's norm, and whether auto scaled it down.
  double norm(size_t i) const { return norms_[i]; }
  bool clipped(size_t i) const { return clipped_[i] != 0; }
  // Of the last Aggregate with 3+ inputs (auto): input i (norm-clipped)
  // against the sum of the others: their dot product and squared norms,
  // summed over a step's segments into a cosine by the caller. A worker
  // that keeps pulling against the rest (a sign flip) shows up here long
  // before any one step can tell it from noise.
  struct Alignment {
    double dot = 0, self = 0, others = 0;
  };
  const Alignment& alignment(size_t i) const { return alignment_[i]; }
  // Of the last Aggregate with 3+ inputs (auto, sketch_residuals): input
  // i's residual from the centre (norm-clipped x_i - centre) as a count
  // sketch of kSketchSize buckets, index offset + j into bucket
  // (offset + j) mod kSketchSize with a pseudo-random sign per index. The
  // sketch sums over segments and steps as the residuals do, and its
  // squared norm estimates theirs: a direction a worker keeps adds up in
  // it, noise does not. And the residual's squared norm, exactly.
  static constexpr size_t kSketchSize = 512;
  bool sketched() const { return sketched_; }
  const float* sketch(size_t i) const { return sketch_.data() + i * kSketchSize; }
  double residual_energy(size_t i) const { return distances_[i] * distances_[i]; }

 private:
  // auto with 3+ inputs: out = the centre, then the centred clipped sum.
  void CentredClip(const float* const* x, const float* w, size_t n, size_t count, float* out,
                   size_t offset);
  // distances_[i] = |s_i x_i - centre|, and the sketches when kept.
  void MeasureResiduals(const float* const* x, size_t n, size_t count, const float* centre,
                        size_t offset);
  void MeasureAlignment(const float* const* x, size_t n, size_t count);

  AggregatorOptions options_;
  std::vector<double> norms_, sorted_, distances_;
  std::vector<float> scale_, radius_scale_, coordinate_, sketch_;
  std::vector<char> clipped_;
  std::vector<Alignment> alignment_;
  bool sketched_ = false;
};

}  // namespace mt
