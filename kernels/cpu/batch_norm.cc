#include "kernels/cpu/batch_norm.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "kernels/cpu/simd.h"
#include "kernels/cpu/thread_pool.h"

namespace mt::kernels {
namespace {

using simd::kLanes;
using simd::Vec;

// Below this many values a pass takes a few microseconds on one core, about
// what handing chunks to the helpers costs.
constexpr int64_t kParallelValues = int64_t{1} << 15;
// Floats a vector accumulator sums before its lanes move into a double: the
// float rounding error of a block stays ~1e-7 relative even for large planes.
constexpr int kBlock = 64 * kLanes;

// fn(channel_begin, channel_end) over all channels, split over the pool
// when the pass is large enough to pay for it.
template <class Fn>
void ForChannels(ThreadPool& pool, const BatchNormGeometry& g, Fn&& fn) {
  const int64_t values = int64_t{g.channels} * g.per_channel();
  if (values < kParallelValues || pool.size() == 1 || g.channels == 1) {
    fn(0, g.channels);
    return;
  }
  pool.ParallelFor(g.channels, [&](int64_t b, int64_t e, int) { fn(int(b), int(e)); });
}

// Row n of channel c: its `inner` values.
inline size_t RowOffset(const BatchNormGeometry& g, int n, int c) {
  return (static_cast<size_t>(n) * g.channels + c) * g.inner;
}

// s1 += sum(x - k), s2 += sum((x - k)^2) over x[0..n).
void AddShiftedSums(const float* x, int n, float k, double& s1, double& s2) {
  const Vec kv = simd::Splat(k);
  int i = 0;
  while (i + 2 * kLanes <= n) {
    const int end = std::min(n, i + kBlock);
    Vec a0{}, a1{}, b0{}, b1{};  // two chains each, so adds overlap
    for (; i + 2 * kLanes <= end; i += 2 * kLanes) {
      const Vec d0 = simd::Load(x + i) - kv, d1 = simd::Load(x + i + kLanes) - kv;
      a0 += d0;
      a1 += d1;
      b0 += d0 * d0;
      b1 += d1 * d1;
    }
    s1 += simd::ReduceAdd(a0 + a1);
    s2 += simd::ReduceAdd(b0 + b1);
  }
  for (; i < n; ++i) {
    const double d = static_cast<double>(x[i]) - k;
    s1 += d;
    s2 += d * d;
  }
}

// s_dy += sum(dy), s_dyx += sum(dy * (x - mean)) over [0..n).
void AddGradientSums(const float* x, const float* dy, int n, float mean, double& s_dy,
                     double& s_dyx) {
  const Vec mv = simd::Splat(mean);
  int i = 0;
  while (i + 2 * kLanes <= n) {
    const int end = std::min(n, i + kBlock);
    Vec a0{}, a1{}, b0{}, b1{};
    for (; i + 2 * kLanes <= end; i += 2 * kLanes) {
      const Vec g0 = simd::Load(dy + i), g1 = simd::Load(dy + i + kLanes);
      a0 += g0;
      a1 += g1;
      b0 += g0 * (simd::Load(x + i) - mv);
      b1 += g1 * (simd::Load(x + i + kLanes) - mv);
    }
    s_dy += simd::ReduceAdd(a0 + a1);
    s_dyx += simd::ReduceAdd(b0 + b1);
  }
  for (; i < n; ++i) {
    s_dy += dy[i];
    s_dyx += static_cast<double>(dy[i]) * (static_cast<double>(x[i]) - mean);
  }
}

// y = x * a + b over [0..n); y may be x.
void AffineRow(const float* x, int n, float a, float b, float* y) {
  const Vec av = simd::Splat(a), bv = simd::Splat(b);
  int i = 0;
  for (; i + kLanes <= n; i += kLanes) simd::Store(y + i, simd::Load(x + i) * av + bv);
  for (; i < n; ++i) y[i] = x[i] * a + b;
}

// dx = dy * a + (x - mean) * b + c over [0..n); dx may be dy.
void BackwardRow(const float* x, const float* dy, int n, float a, float b, float mean, float c,
                 float* dx) {
  const Vec av = simd::Splat(a), bv = simd::Splat(b), mv = simd::Splat(mean), cv = simd::Splat(c);
  int i = 0;
  for (; i + kLanes <= n; i += kLanes)
    simd::Store(dx + i, simd::Load(dy + i) * av + (simd::Load(x + i) - mv) * bv + cv);
  for (; i < n; ++i) dx[i] = dy[i] * a + (x[i] - mean) * b + c;
}

// y = x * a + b for every row of channel c.
void AffineChannel(const BatchNormGeometry& g, int c, const float* x, float a, float b, float* y) {
  for (int n = 0; n < g.batch; ++n) {
    const size_t at = RowOffset(g, n, c);
    AffineRow(x + at, g.inner, a, b, y + at);
  }
}

}  // namespace

void BatchNormForwardTraining(ThreadPool& pool, const BatchNormGeometry& g, const float* x,
                              const float* scale, const float* shift, float* running_mean,
                              float* running_var, float* save_mean, float* save_invstd, float* y) {
  const double count = g.per_channel();
  // PyTorch's running variance is the unbiased estimate; one value has none,
  // so it keeps the biased one (0) rather than dividing by zero.
  const double unbias = count > 1 ? count / (count - 1) : 1.0;
  const double m = g.momentum;
  ForChannels(pool, g, [&](int begin, int end) {
    for (int c = begin; c < end; ++c) {
      const float k = x[RowOffset(g, 0, c)];
      double s1 = 0.0, s2 = 0.0;
      for (int n = 0; n < g.batch; ++n) AddShiftedSums(x + RowOffset(g, n, c), g.inner, k, s1, s2);
      const double shifted_mean = s1 / count;
      const double var = std::max(0.0, s2 / count - shifted_mean * shifted_mean);
      const double mean = k + shifted_mean;
      const double invstd = 1.0 / std::sqrt(var + g.epsilon);
      save_mean[c] = static_cast<float>(mean);
      save_invstd[c] = static_cast<float>(invstd);
      running_mean[c] = static_cast<float>((1.0 - m) * running_mean[c] + m * mean);
      running_var[c] = static_cast<float>((1.0 - m) * running_var[c] + m * var * unbias);
      const double a = scale[c] * invstd;
      AffineChannel(g, c, x, static_cast<float>(a), static_cast<float>(shift[c] - mean * a), y);
    }
  });
}

void BatchNormForwardInference(ThreadPool& pool, const BatchNormGeometry& g, const float* x,
                               const float* scale, const float* shift, const float* running_mean,
                               const float* running_var, float* save_invstd, float* y) {
  ForChannels(pool, g, [&](int begin, int end) {
    for (int c = begin; c < end; ++c) {
      const double invstd = 1.0 / std::sqrt(static_cast<double>(running_var[c]) + g.epsilon);
      save_invstd[c] = static_cast<float>(invstd);
      const double a = scale[c] * invstd;
      AffineChannel(g, c, x, static_cast<float>(a),
                    static_cast<float>(shift[c] - running_mean[c] * a), y);
    }
  });
}

void BatchNormBackward(ThreadPool& pool, const BatchNormGeometry& g, const float* x,
                       const float* d_y, const float* scale, const float* save_mean,
                       const float* save_invstd, bool batch_stats, float* d_x, float* d_scale,
                       float* d_shift) {
  const bool need_sums = batch_stats || d_scale != nullptr || d_shift != nullptr;
  const double count = g.per_channel();
  ForChannels(pool, g, [&](int begin, int end) {
    for (int c = begin; c < end; ++c) {
      const float mean = save_mean[c];
      const double invstd = save_invstd[c];
      double s_dy = 0.0, s_dyx = 0.0;
      if (need_sums) {
        for (int n = 0; n < g.batch; ++n) {
          const size_t at = RowOffset(g, n, c);
          AddGradientSums(x + at, d_y + at, g.inner, mean, s_dy, s_dyx);
        }
      }
      if (d_shift) d_shift[c] = static_cast<float>(s_dy);
      if (d_scale) d_scale[c] = static_cast<float>(s_dyx * invstd);
      if (!d_x) continue;
      // With batch statistics, d_x = scale * invstd * (d_y - mean(d_y) -
      // xhat * mean(d_y * xhat)), xhat = (x - mean) * invstd; without, the
      // map is affine and only the first term remains.
      const double a = scale[c] * invstd;
      if (!batch_stats) {
        AffineChannel(g, c, d_y, static_cast<float>(a), 0.0f, d_x);
        continue;
      }
      const double b = -a * invstd * invstd * s_dyx / count;
      const double off = -a * s_dy / count;
      for (int n = 0; n < g.batch; ++n) {
        const size_t at = RowOffset(g, n, c);
        BackwardRow(x + at, d_y + at, g.inner, static_cast<float>(a), static_cast<float>(b), mean,
                    static_cast<float>(off), d_x + at);
      }
    }
  });
}

}  // namespace mt::kernels
