#include "kernels/cpu/batch_norm.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

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

// Lanes [0, rem) of p, the others `fill` (rem < kLanes).
inline Vec LoadPartial(const float* p, int rem, Vec fill) {
#if defined(__AVX512F__)
  return _mm512_mask_loadu_ps(fill, static_cast<__mmask16>((1u << rem) - 1u), p);
#else
  for (int j = 0; j < rem; ++j) fill[j] = p[j];
  return fill;
#endif
}

inline void StorePartial(float* p, int rem, Vec v) {
#if defined(__AVX512F__)
  _mm512_mask_storeu_ps(p, static_cast<__mmask16>((1u << rem) - 1u), v);
#else
  for (int j = 0; j < rem; ++j) p[j] = v[j];
#endif
}

// Two sums of one channel: float vectors (two chains each, so adds overlap)
// over at most kBlock values, whatever the rows' lengths, moved into doubles
// between blocks. Small planes (7x7) then cost no reduction per row.
class BlockSums {
 public:
  double first() {
    Flush();
    return s1_;
  }
  double second() {
    Flush();
    return s2_;
  }

  // Adds f(u, v) -> (p, q) over [0, n) to the two sums, where u and v are
  // the vectors load(i) of the two rows; lanes past n hold pad_u and pad_v,
  // for which f must give zeros.
  template <class F>
  void AddRows(const float* u, const float* v, int n, Vec pad_u, Vec pad_v, F f) {
    while (n > 0) {
      const int take = std::min(n, kBlock - pending_);
      int i = 0;
      for (; i + 2 * kLanes <= take; i += 2 * kLanes) {
        f(simd::Load(u + i), simd::Load(v + i), a0_, b0_);
        f(simd::Load(u + i + kLanes), simd::Load(v + i + kLanes), a1_, b1_);
      }
      if (i + kLanes <= take) {
        f(simd::Load(u + i), simd::Load(v + i), a0_, b0_);
        i += kLanes;
      }
      if (i < take) {
        f(LoadPartial(u + i, take - i, pad_u), LoadPartial(v + i, take - i, pad_v), a1_, b1_);
      }
      pending_ += take;
      if (pending_ == kBlock) Flush();
      u += take;
      v += take;
      n -= take;
    }
  }

 private:
  void Flush() {
    s1_ += simd::ReduceAdd(a0_ + a1_);
    s2_ += simd::ReduceAdd(b0_ + b1_);
    a0_ = a1_ = b0_ = b1_ = Vec{};
    pending_ = 0;
  }

  Vec a0_{}, a1_{}, b0_{}, b1_{};
  int pending_ = 0;
  double s1_ = 0.0, s2_ = 0.0;
};

// y = x * a + b over [0..n); y may be x.
void AffineRow(const float* x, int n, float a, float b, float* y) {
  const Vec av = simd::Splat(a), bv = simd::Splat(b);
  int i = 0;
  for (; i + kLanes <= n; i += kLanes) simd::Store(y + i, simd::Load(x + i) * av + bv);
  if (i < n) StorePartial(y + i, n - i, LoadPartial(x + i, n - i, Vec{}) * av + bv);
}

// dx = dy * a + (x - mean) * b + c over [0..n); dx may be dy.
void BackwardRow(const float* x, const float* dy, int n, float a, float b, float mean, float c,
                 float* dx) {
  const Vec av = simd::Splat(a), bv = simd::Splat(b), mv = simd::Splat(mean), cv = simd::Splat(c);
  int i = 0;
  for (; i + kLanes <= n; i += kLanes)
    simd::Store(dx + i, simd::Load(dy + i) * av + (simd::Load(x + i) - mv) * bv + cv);
  if (i < n) {
    const Vec g = LoadPartial(dy + i, n - i, Vec{}), xv = LoadPartial(x + i, n - i, mv);
    StorePartial(dx + i, n - i, g * av + (xv - mv) * bv + cv);
  }
}

// Channels are processed in tiles: each pass over a tile walks the samples
// in order and, within a sample, the tile's channels, whose planes are
// adjacent in memory. Small planes (7x7) then stream like one array instead
// of hopping a whole sample ahead after every 49 values, and a tile small
// enough for the cache is still there when the second pass reads it again.
constexpr int kMaxTile = 16;
constexpr size_t kTileBytes = size_t{256} << 10;  // a phone core's L2 holds it

// Channels per tile when each channel brings `streams` arrays of batch *
// inner floats (x, or x and d_y).
int TileChannels(const BatchNormGeometry& g, int streams) {
  const size_t bytes = static_cast<size_t>(g.per_channel()) * sizeof(float) * streams;
  return static_cast<int>(std::clamp<size_t>(kTileBytes / std::max<size_t>(bytes, 1), 1, kMaxTile));
}

// fn(tile_begin, tile_end) over the tiles of channels [begin, end).
template <class Fn>
void ForTiles(int begin, int end, int tile, Fn&& fn) {
  for (int t = begin; t < end; t += tile) fn(t, std::min(end, t + tile));
}

// y = x * a[c - t0] + b[c - t0] for channels [t0, t1), samples in order.
void AffineTile(const BatchNormGeometry& g, int t0, int t1, const float* x, const float* a,
                const float* b, float* y) {
  for (int n = 0; n < g.batch; ++n) {
    for (int c = t0; c < t1; ++c) {
      const size_t at = RowOffset(g, n, c);
      AffineRow(x + at, g.inner, a[c - t0], b[c - t0], y + at);
    }
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
  const int tile = TileChannels(g, 1);
  ForChannels(pool, g, [&](int begin, int end) {
    ForTiles(begin, end, tile, [&](int t0, int t1) {
      // Sums of x - k, k the channel's first value.
      BlockSums sums[kMaxTile];
      float k[kMaxTile];
      for (int c = t0; c < t1; ++c) k[c - t0] = x[RowOffset(g, 0, c)];
      for (int n = 0; n < g.batch; ++n) {
        for (int c = t0; c < t1; ++c) {
          const float* row = x + RowOffset(g, n, c);
          const Vec kv = simd::Splat(k[c - t0]);
          // Padding lanes hold k, whose shifted value is 0.
          sums[c - t0].AddRows(row, row, g.inner, kv, kv, [kv](Vec u, Vec, Vec& a, Vec& b) {
            const Vec d = u - kv;
            a += d;
            b += d * d;
          });
        }
      }
      float a[kMaxTile], b[kMaxTile];
      for (int c = t0; c < t1; ++c) {
        BlockSums& s = sums[c - t0];
        const double shifted_mean = s.first() / count;
        const double var = std::max(0.0, s.second() / count - shifted_mean * shifted_mean);
        const double mean = k[c - t0] + shifted_mean;
        const double invstd = 1.0 / std::sqrt(var + g.epsilon);
        save_mean[c] = static_cast<float>(mean);
        save_invstd[c] = static_cast<float>(invstd);
        running_mean[c] = static_cast<float>((1.0 - m) * running_mean[c] + m * mean);
        running_var[c] = static_cast<float>((1.0 - m) * running_var[c] + m * var * unbias);
        const double scaled = scale[c] * invstd;
        a[c - t0] = static_cast<float>(scaled);
        b[c - t0] = static_cast<float>(shift[c] - mean * scaled);
      }
      AffineTile(g, t0, t1, x, a, b, y);
    });
  });
}

void BatchNormForwardInference(ThreadPool& pool, const BatchNormGeometry& g, const float* x,
                               const float* scale, const float* shift, const float* running_mean,
                               const float* running_var, float* save_invstd, float* y) {
  ForChannels(pool, g, [&](int begin, int end) {
    ForTiles(begin, end, kMaxTile, [&](int t0, int t1) {
      float a[kMaxTile], b[kMaxTile];
      for (int c = t0; c < t1; ++c) {
        const double invstd = 1.0 / std::sqrt(static_cast<double>(running_var[c]) + g.epsilon);
        save_invstd[c] = static_cast<float>(invstd);
        const double scaled = scale[c] * invstd;
        a[c - t0] = static_cast<float>(scaled);
        b[c - t0] = static_cast<float>(shift[c] - running_mean[c] * scaled);
      }
      AffineTile(g, t0, t1, x, a, b, y);
    });
  });
}

void BatchNormBackward(ThreadPool& pool, const BatchNormGeometry& g, const float* x,
                       const float* d_y, const float* scale, const float* save_mean,
                       const float* save_invstd, bool batch_stats, float* d_x, float* d_scale,
                       float* d_shift) {
  const bool need_sums = batch_stats || d_scale != nullptr || d_shift != nullptr;
  const double count = g.per_channel();
  const int tile = TileChannels(g, 2);
  ForChannels(pool, g, [&](int begin, int end) {
    ForTiles(begin, end, tile, [&](int t0, int t1) {
      // Sums of d_y and of d_y * (x - mean).
      BlockSums sums[kMaxTile];
      if (need_sums) {
        for (int n = 0; n < g.batch; ++n) {
          for (int c = t0; c < t1; ++c) {
            const size_t at = RowOffset(g, n, c);
            const Vec mv = simd::Splat(save_mean[c]);
            // Padding lanes: d_y 0, x the mean.
            sums[c - t0].AddRows(d_y + at, x + at, g.inner, Vec{}, mv,
                                 [mv](Vec dy, Vec xv, Vec& a, Vec& b) {
                                   a += dy;
                                   b += dy * (xv - mv);
                                 });
          }
        }
      }
      // d_x = a * d_y + b * (x - mean) + off: with batch statistics,
      // scale * invstd * (d_y - mean(d_y) - xhat * mean(d_y * xhat)) with
      // xhat = (x - mean) * invstd; without, the map is affine and only
      // a * d_y remains.
      float a[kMaxTile], b[kMaxTile], off[kMaxTile];
      for (int c = t0; c < t1; ++c) {
        const double s_dy = need_sums ? sums[c - t0].first() : 0.0;
        const double s_dyx = need_sums ? sums[c - t0].second() : 0.0;
        const double invstd = save_invstd[c];
        if (d_shift) d_shift[c] = static_cast<float>(s_dy);
        if (d_scale) d_scale[c] = static_cast<float>(s_dyx * invstd);
        const double scaled = scale[c] * invstd;
        a[c - t0] = static_cast<float>(scaled);
        b[c - t0] = batch_stats ? static_cast<float>(-scaled * invstd * invstd * s_dyx / count) : 0;
        off[c - t0] = batch_stats ? static_cast<float>(-scaled * s_dy / count) : 0;
      }
      if (!d_x) return;
      for (int n = 0; n < g.batch; ++n) {
        for (int c = t0; c < t1; ++c) {
          const size_t at = RowOffset(g, n, c);
          if (batch_stats) {
            BackwardRow(x + at, d_y + at, g.inner, a[c - t0], b[c - t0], save_mean[c], off[c - t0],
                        d_x + at);
          } else {
            AffineRow(d_y + at, g.inner, a[c - t0], 0.0f, d_x + at);
          }
        }
      }
    });
  });
}

}  // namespace mt::kernels
