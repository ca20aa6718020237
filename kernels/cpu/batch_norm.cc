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

// The vector at p: all lanes, or the first `lanes` and `fill` after them.
inline Vec LoadLanes(const float* p, int lanes, Vec fill) {
  return lanes == kLanes ? simd::Load(p) : LoadPartial(p, lanes, fill);
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

  // Adds a row of n values: f(i, lanes, a, b) adds the vectors at [i, i +
  // lanes) to the accumulators a and b; lanes is kLanes but for the row's
  // last vector, whose missing lanes f must pad to add zeros.
  template <class F>
  void AddRow(int n, F f) {
    int base = 0;
    while (n > 0) {
      const int take = std::min(n, kBlock - pending_);
      int i = 0;
      for (; i + 2 * kLanes <= take; i += 2 * kLanes) {
        f(base + i, kLanes, a0_, b0_);
        f(base + i + kLanes, kLanes, a1_, b1_);
      }
      if (i + kLanes <= take) {
        f(base + i, kLanes, a0_, b0_);
        i += kLanes;
      }
      if (i < take) f(base + i, take - i, a1_, b1_);
      pending_ += take;
      if (pending_ == kBlock) Flush();
      base += take;
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

// The fused activation as vectors; kClip false is no activation at all.
template <bool kClip>
struct Clip {
  explicit Clip(OutputClip c) : lo(simd::Splat(c.lo)), hi(simd::Splat(c.hi)) {}
  // ClipForward's comparisons, in its order.
  Vec Apply(Vec v) const {
    if constexpr (!kClip) return v;
    const Vec up = v > lo ? v : lo;
    return up < hi ? up : hi;
  }
  // g where lo < v < hi, else 0: ClipBackward's mask, for v the value
  // before the clip (lo < clip(v) < hi exactly when lo < v < hi, NaN included).
  Vec Mask(Vec v, Vec g) const {
    if constexpr (!kClip) return g;
    return (v > lo) & (v < hi) ? g : Vec{};
  }
  Vec lo, hi;
};

// The affine map y = x * a + b the forward pass applies to a channel, from
// the statistics it saves (rounded to float), so the backward pass can form
// the same a and b again and, from x, the same pre-clip values bit for bit.
struct Affine {
  float a, b;
};
inline Affine AffineOf(float scale, float shift, float mean, float invstd) {
  const double scaled = static_cast<double>(scale) * invstd;
  return {static_cast<float>(scaled), static_cast<float>(shift - mean * scaled)};
}

// y = clip(x * a + b) over [0..n); y may be x.
template <bool kClip>
void AffineRow(const float* x, int n, float a, float b, const Clip<kClip>& clip, float* y) {
  const Vec av = simd::Splat(a), bv = simd::Splat(b);
  int i = 0;
  for (; i + kLanes <= n; i += kLanes) simd::Store(y + i, clip.Apply(simd::Load(x + i) * av + bv));
  if (i < n) StorePartial(y + i, n - i, clip.Apply(LoadPartial(x + i, n - i, Vec{}) * av + bv));
}

// dx = mask(dy) * a + (x - mean) * b + c over [0..n), the mask from the
// forward pass's pre-clip values x * f.a + f.b (unused without a clip);
// dx may be dy.
template <bool kClip>
void BackwardRow(const float* x, const float* dy, int n, float a, float b, float mean, float c,
                 Affine f, const Clip<kClip>& clip, float* dx) {
  const Vec av = simd::Splat(a), bv = simd::Splat(b), mv = simd::Splat(mean), cv = simd::Splat(c);
  const Vec fa = simd::Splat(f.a), fb = simd::Splat(f.b);
  auto at = [&](int i, int lanes) {
    const Vec xv = LoadLanes(x + i, lanes, mv);
    Vec g = LoadLanes(dy + i, lanes, Vec{});
    if constexpr (kClip) g = clip.Mask(xv * fa + fb, g);
    return g * av + (xv - mv) * bv + cv;
  };
  int i = 0;
  for (; i + kLanes <= n; i += kLanes) simd::Store(dx + i, at(i, kLanes));
  if (i < n) StorePartial(dx + i, n - i, at(i, n - i));
}

// dx = mask(dy) * a over [0..n): the affine map's gradient, the mask as in
// BackwardRow; dx may be dy.
template <bool kClip>
void ScaleRow(const float* x, const float* dy, int n, float a, Affine f, const Clip<kClip>& clip,
              float* dx) {
  const Vec av = simd::Splat(a), fa = simd::Splat(f.a), fb = simd::Splat(f.b);
  auto at = [&](int i, int lanes) {
    Vec g = LoadLanes(dy + i, lanes, Vec{});
    if constexpr (kClip) g = clip.Mask(LoadLanes(x + i, lanes, Vec{}) * fa + fb, g);
    return g * av;
  };
  int i = 0;
  for (; i + kLanes <= n; i += kLanes) simd::Store(dx + i, at(i, kLanes));
  if (i < n) StorePartial(dx + i, n - i, at(i, n - i));
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

// y = clip(x * a[c - t0] + b[c - t0]) for channels [t0, t1), samples in order.
template <bool kClip>
void AffineTile(const BatchNormGeometry& g, int t0, int t1, const float* x, const float* a,
                const float* b, const Clip<kClip>& clip, float* y) {
  for (int n = 0; n < g.batch; ++n) {
    for (int c = t0; c < t1; ++c) {
      const size_t at = RowOffset(g, n, c);
      AffineRow(x + at, g.inner, a[c - t0], b[c - t0], clip, y + at);
    }
  }
}

template <bool kClip>
void ForwardTraining(ThreadPool& pool, const BatchNormGeometry& g, const float* x,
                     const float* scale, const float* shift, float* running_mean,
                     float* running_var, float* save_mean, float* save_invstd,
                     const Clip<kClip>& clip, float* y) {
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
          sums[c - t0].AddRow(g.inner, [row, kv](int i, int lanes, Vec& a, Vec& b) {
            const Vec d = LoadLanes(row + i, lanes, kv) - kv;
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
        const Affine f = AffineOf(scale[c], shift[c], save_mean[c], save_invstd[c]);
        a[c - t0] = f.a;
        b[c - t0] = f.b;
      }
      AffineTile(g, t0, t1, x, a, b, clip, y);
    });
  });
}

template <bool kClip>
void Replay(ThreadPool& pool, const BatchNormGeometry& g, const float* x, const float* scale,
            const float* shift, const float* save_mean, const float* save_invstd,
            const Clip<kClip>& clip, float* y) {
  ForChannels(pool, g, [&](int begin, int end) {
    ForTiles(begin, end, kMaxTile, [&](int t0, int t1) {
      float a[kMaxTile], b[kMaxTile];
      for (int c = t0; c < t1; ++c) {
        const Affine f = AffineOf(scale[c], shift[c], save_mean[c], save_invstd[c]);
        a[c - t0] = f.a;
        b[c - t0] = f.b;
      }
      AffineTile(g, t0, t1, x, a, b, clip, y);
    });
  });
}

// Evaluation is a replay over the running mean, once 1 / sqrt(var + eps)
// is saved: the same per-channel a and b, the same pass.
template <bool kClip>
void ForwardInference(ThreadPool& pool, const BatchNormGeometry& g, const float* x,
                      const float* scale, const float* shift, const float* running_mean,
                      const float* running_var, float* save_invstd, const Clip<kClip>& clip,
                      float* y) {
  for (int c = 0; c < g.channels; ++c)
    save_invstd[c] =
        static_cast<float>(1.0 / std::sqrt(static_cast<double>(running_var[c]) + g.epsilon));
  Replay(pool, g, x, scale, shift, running_mean, save_invstd, clip, y);
}

template <bool kClip>
void Backward(ThreadPool& pool, const BatchNormGeometry& g, const float* x, const float* d_y,
              const float* scale, const float* shift, const float* save_mean,
              const float* save_invstd, bool batch_stats, const Clip<kClip>& clip, float* d_x,
              float* d_scale, float* d_shift) {
  const bool need_sums = batch_stats || d_scale != nullptr || d_shift != nullptr;
  const double count = g.per_channel();
  const int tile = TileChannels(g, 2);
  ForChannels(pool, g, [&](int begin, int end) {
    ForTiles(begin, end, tile, [&](int t0, int t1) {
      // The forward pass's affine maps, for the clip's mask.
      Affine f[kMaxTile] = {};
      if (kClip)
        for (int c = t0; c < t1; ++c)
          f[c - t0] = AffineOf(scale[c], shift[c], save_mean[c], save_invstd[c]);
      // Sums of dz and of dz * (x - mean), dz = mask(d_y).
      BlockSums sums[kMaxTile];
      if (need_sums) {
        for (int n = 0; n < g.batch; ++n) {
          for (int c = t0; c < t1; ++c) {
            const size_t at = RowOffset(g, n, c);
            const float *dy_row = d_y + at, *x_row = x + at;
            const Vec mv = simd::Splat(save_mean[c]);
            const Vec fa = simd::Splat(f[c - t0].a), fb = simd::Splat(f[c - t0].b);
            // Padding lanes: d_y 0, x the mean.
            sums[c - t0].AddRow(g.inner, [&](int i, int lanes, Vec& a, Vec& b) {
              const Vec xv = LoadLanes(x_row + i, lanes, mv);
              Vec dz = LoadLanes(dy_row + i, lanes, Vec{});
              if constexpr (kClip) dz = clip.Mask(xv * fa + fb, dz);
              a += dz;
              b += dz * (xv - mv);
            });
          }
        }
      }
      // d_x = a * dz + b * (x - mean) + off: with batch statistics,
      // scale * invstd * (dz - mean(dz) - xhat * mean(dz * xhat)) with
      // xhat = (x - mean) * invstd; without, the map is affine and only
      // a * dz remains.
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
                        f[c - t0], clip, d_x + at);
          } else {
            ScaleRow(x + at, d_y + at, g.inner, a[c - t0], f[c - t0], clip, d_x + at);
          }
        }
      }
    });
  });
}

}  // namespace

void BatchNormForwardTraining(ThreadPool& pool, const BatchNormGeometry& g, const float* x,
                              const float* scale, const float* shift, float* running_mean,
                              float* running_var, float* save_mean, float* save_invstd, float* y,
                              OutputClip clip) {
  if (clip.active)
    ForwardTraining(pool, g, x, scale, shift, running_mean, running_var, save_mean, save_invstd,
                    Clip<true>(clip), y);
  else
    ForwardTraining(pool, g, x, scale, shift, running_mean, running_var, save_mean, save_invstd,
                    Clip<false>(clip), y);
}

void BatchNormForwardInference(ThreadPool& pool, const BatchNormGeometry& g, const float* x,
                               const float* scale, const float* shift, const float* running_mean,
                               const float* running_var, float* save_invstd, float* y,
                               OutputClip clip) {
  if (clip.active)
    ForwardInference(pool, g, x, scale, shift, running_mean, running_var, save_invstd,
                     Clip<true>(clip), y);
  else
    ForwardInference(pool, g, x, scale, shift, running_mean, running_var, save_invstd,
                     Clip<false>(clip), y);
}

void BatchNormReplay(ThreadPool& pool, const BatchNormGeometry& g, const float* x,
                     const float* scale, const float* shift, const float* save_mean,
                     const float* save_invstd, float* y, OutputClip clip) {
  if (clip.active)
    Replay(pool, g, x, scale, shift, save_mean, save_invstd, Clip<true>(clip), y);
  else
    Replay(pool, g, x, scale, shift, save_mean, save_invstd, Clip<false>(clip), y);
}

void BatchNormBackward(ThreadPool& pool, const BatchNormGeometry& g, const float* x,
                       const float* d_y, const float* scale, const float* save_mean,
                       const float* save_invstd, bool batch_stats, float* d_x, float* d_scale,
                       float* d_shift, OutputClip clip, const float* shift) {
  if (clip.active)
    Backward(pool, g, x, d_y, scale, shift, save_mean, save_invstd, batch_stats, Clip<true>(clip),
             d_x, d_scale, d_shift);
  else
    Backward(pool, g, x, d_y, scale, shift, save_mean, save_invstd, batch_stats, Clip<false>(clip),
             d_x, d_scale, d_shift);
}

}  // namespace mt::kernels
