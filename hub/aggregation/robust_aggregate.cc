#include "hub/aggregation/robust_aggregate.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace mt {

const char* AggregationName(Aggregation a) {
  switch (a) {
    case Aggregation::kAuto: return "auto";
    case Aggregation::kMean: return "mean";
    case Aggregation::kTrimmedMean: return "trimmed-mean";
    case Aggregation::kMedian: return "median";
  }
  return "?";
}

double L2Norm(const float* x, size_t count) {
  double sum = 0;
  for (size_t j = 0; j < count; ++j) sum += static_cast<double>(x[j]) * x[j];
  return std::sqrt(sum);
}

double LowerMedian(double* values, size_t n) {
  if (n == 0) return 0;
  double* mid = values + (n - 1) / 2;
  std::nth_element(values, mid, values + n);
  return *mid;
}

size_t TrimOf(size_t n) { return n >= 3 ? std::max<size_t>(1, (n - 1) / 4) : 0; }

namespace {

// Sorts a handful of floats; insertion sort beats std::sort at these sizes.
void SortSmall(float* v, size_t n) {
  for (size_t i = 1; i < n; ++i) {
    const float x = v[i];
    size_t k = i;
    for (; k > 0 && v[k - 1] > x; --k) v[k] = v[k - 1];
    v[k] = x;
  }
}

// Puts the `kept` values that follow the `trim` smallest into v[trim,
// trim + kept), in any order. A handful is sorted outright; beyond, two
// selections take O(n) a coordinate instead of a sort's O(n log n): with 64
// workers the coordinate-wise median was two thirds of the hub's CPU.
void KeepMiddle(float* v, size_t n, size_t trim, size_t kept) {
  if (n <= 16) return SortSmall(v, n);
  float* first = v + trim;
  std::nth_element(v, first, v + n);  // v[trim] in place, smaller ones before it
  if (kept > 1) std::nth_element(first + 1, first + kept - 1, v + n);
}

float Median3(float a, float b, float c) {
  return std::max(std::min(a, b), std::min(std::max(a, b), c));
}

}  // namespace

void CoordinateTrimmedMean(const float* const* x, const float* scale, size_t n, size_t trim,
                           size_t count, float* scratch, float* out) {
  if (n == 0) return;
  if (n == 3 && trim == 1) {  // the common case, without a sort
    const float s0 = scale ? scale[0] : 1, s1 = scale ? scale[1] : 1, s2 = scale ? scale[2] : 1;
    for (size_t j = 0; j < count; ++j) out[j] = Median3(s0 * x[0][j], s1 * x[1][j], s2 * x[2][j]);
    return;
  }
  const size_t kept = n - 2 * trim;
  for (size_t j = 0; j < count; ++j) {
    for (size_t i = 0; i < n; ++i) scratch[i] = (scale ? scale[i] : 1.0f) * x[i][j];
    KeepMiddle(scratch, n, trim, kept);
    double sum = 0;
    for (size_t i = trim; i < trim + kept; ++i) sum += scratch[i];
    out[j] = static_cast<float>(sum / static_cast<double>(kept));
  }
}

void WeightedSum(const float* const* x, const float* w, size_t n, size_t count, float* out) {
  // Inputs in the given order, so the result does not depend on arrival order.
  for (size_t i = 0; i < n; ++i) {
    const float wi = w[i];
    const float* xi = x[i];
    if (i == 0) {
      for (size_t j = 0; j < count; ++j) out[j] = wi * xi[j];
    } else {
      for (size_t j = 0; j < count; ++j) out[j] += wi * xi[j];
    }
  }
}

void RobustAggregator::Reserve(size_t inputs) {
  if (norms_.size() >= inputs) return;
  norms_.resize(inputs);
  sorted_.resize(inputs);
  distances_.resize(inputs);
  scale_.resize(inputs);
  radius_scale_.resize(inputs);
  coordinate_.resize(inputs);
  clipped_.resize(inputs);
  alignment_.resize(inputs);
  if (options_.sketch_residuals) sketch_.resize(inputs * kSketchSize);
}

RobustAggregator::Outcome RobustAggregator::Aggregate(const float* const* x, const float* w,
                                                      size_t n, size_t count, float* out,
                                                      size_t offset, const double* usual) {
  Reserve(n);
  Outcome o;
  sketched_ = false;
  for (size_t i = 0; i < n; ++i) {
    norms_[i] = L2Norm(x[i], count);
    scale_[i] = 1;
    clipped_[i] = 0;
  }
  std::copy(norms_.begin(), norms_.begin() + static_cast<std::ptrdiff_t>(n), sorted_.begin());
  const double median_norm = LowerMedian(sorted_.data(), n);
  // With a majority to compare against, an input far beyond it is not a
  // gradient of this model: refused before it can touch anything. Unless
  // it came there step by step from its own usual norm (an honest worker
  // whose data differ from the others').
  if (n >= 3 && median_norm > 0) {
    for (size_t i = 0; i < n; ++i) {
      const double r = norms_[i] / median_norm;
      const bool jumped = !usual || usual[i] <= 0 || norms_[i] > options_.refuse_factor * usual[i];
      if (r > options_.refuse_factor && r > o.ratio && jumped) {
        o.refused = static_cast<int>(i);
        o.ratio = r;
      }
    }
    if (o.refused >= 0) return o;
  }
  switch (options_.mode) {
    case Aggregation::kMean: WeightedSum(x, w, n, count, out); break;
    case Aggregation::kMedian:
      CoordinateTrimmedMean(x, nullptr, n, (n - 1) / 2, count, coordinate_.data(), out);
      break;
    case Aggregation::kTrimmedMean:
      CoordinateTrimmedMean(x, nullptr, n, TrimOf(n), count, coordinate_.data(), out);
      break;
    case Aggregation::kAuto: {
      const double bound = options_.clip_factor * median_norm;
      for (size_t i = 0; i < n; ++i)
        if (n >= 2 && norms_[i] > bound) {
          scale_[i] = static_cast<float>(bound / norms_[i]);
          clipped_[i] = 1;
        }
      if (n >= 3) {
        MeasureAlignment(x, n, count);
        CentredClip(x, w, n, count, out, offset);
      } else {
        for (size_t i = 0; i < n; ++i) radius_scale_[i] = w[i] * scale_[i];
        WeightedSum(x, radius_scale_.data(), n, count, out);
      }
      break;
    }
  }
  for (size_t j = 0; j < count && o.finite; ++j) o.finite = std::isfinite(out[j]);
  return o;
}

void RobustAggregator::MeasureAlignment(const float* const* x, size_t n, size_t count) {
  for (size_t i = 0; i < n; ++i) alignment_[i] = Alignment{};
  for (size_t j = 0; j < count; ++j) {
    double sum = 0;
    for (size_t i = 0; i < n; ++i) sum += static_cast<double>(scale_[i]) * x[i][j];
    for (size_t i = 0; i < n; ++i) {
      const double v = static_cast<double>(scale_[i]) * x[i][j], others = sum - v;
      Alignment& a = alignment_[i];
      a.dot += v * others;
      a.self += v * v;
      a.others += others * others;
    }
  }
}

void RobustAggregator::MeasureResiduals(const float* const* x, size_t n, size_t count,
                                        const float* centre, size_t offset) {
  sketched_ = options_.sketch_residuals;
  for (size_t i = 0; i < n; ++i) {
    double sum = 0;
    const float s = scale_[i];
    const float* xi = x[i];
    if (!sketched_) {
      for (size_t j = 0; j < count; ++j) {
        const double d = static_cast<double>(s * xi[j]) - centre[j];
        sum += d * d;
      }
      distances_[i] = std::sqrt(sum);
      continue;
    }
    float* sketch = sketch_.data() + i * kSketchSize;
    std::fill(sketch, sketch + kSketchSize, 0.0f);
    // In runs of consecutive buckets, so the inner loop has no modulo.
    for (size_t j = 0; j < count;) {
      const size_t bucket = (offset + j) % kSketchSize;
      const size_t run = std::min(kSketchSize - bucket, count - j);
      for (size_t k = 0; k < run; ++k, ++j) {
        const float d = s * xi[j] - centre[j];
        sum += static_cast<double>(d) * d;
        // The top bit of a multiplicative hash of the index: the sign.
        const uint32_t h = (static_cast<uint32_t>(offset + j) ^ options_.sketch_seed) * 2654435761u;
        sketch[bucket + k] += (h >> 31) ? -d : d;
      }
    }
    distances_[i] = std::sqrt(sum);
  }
}

void RobustAggregator::CentredClip(const float* const* x, const float* w, size_t n, size_t count,
                                   float* out, size_t offset) {
  // The centre: the coordinate-wise median of the norm-clipped inputs,
  // which no single worker can move beyond the others' range.
  CoordinateTrimmedMean(x, scale_.data(), n, (n - 1) / 2, count, coordinate_.data(), out);
  MeasureResiduals(x, n, count, out, offset);
  std::copy(distances_.begin(), distances_.begin() + static_cast<std::ptrdiff_t>(n),
            sorted_.begin());
  const double radius = options_.clip_factor * LowerMedian(sorted_.data(), n);
  for (size_t i = 0; i < n; ++i) {
    float r = 1;
    if (distances_[i] > radius) {
      r = static_cast<float>(radius / distances_[i]);
      clipped_[i] = 1;
    }
    radius_scale_[i] = w[i] * r;
  }
  // Honest inputs inside the radius: centre + sum w_i (x_i - centre), the
  // weighted mean itself (the weights sum to 1).
  for (size_t j = 0; j < count; ++j) {
    const float c = out[j];
    float sum = c;
    for (size_t i = 0; i < n; ++i) sum += radius_scale_[i] * (scale_[i] * x[i][j] - c);
    out[j] = sum;
  }
}

}  // namespace mt
