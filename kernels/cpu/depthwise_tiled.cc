#include "kernels/cpu/depthwise_tiled.h"

#include <algorithm>
#include <numeric>

#include "kernels/cpu/channel_tile.h"
#include "kernels/cpu/simd.h"
#include "kernels/cpu/thread_pool.h"

namespace mt::kernels {
namespace {

using channel_tile::PlanesToTile;
using channel_tile::TileCursor;
using channel_tile::TileToPlanes;
using simd::kLanes;
using simd::Vec;

// Samples per backward unit: fixed, so the weight gradient's summation order
// does not depend on the thread count.
constexpr int kGroupSamples = 8;
// Outputs per register block: independent accumulators hide the latency of
// the multiply-add chains.
constexpr int kBlock = 4;

struct TilePlan {
  int k, s, pad, kk, in_h, in_w, oh, ow, m, in_c, batch, tiles, groups;
  int hp, wp;      // the zero-bordered input tile, in pixels
  int bd, rd, cd;  // the output gradient tiles: border, rows, columns
  // Rows per band of the output (forward) and input gradient (backward)
  // tiles, which are transposed to planes band by band while in L1.
  int out_band, in_band;
  size_t d_size;  // floats per output gradient tile (one per multiplier)
  size_t in_plane, out_plane;
  // Offsets in a chunk's workspace: input tile, output gradient tiles, a band
  // of the output or input gradient tile (dense), weights (m x (kk taps +
  // bias) vectors).
  size_t t, d, x, w, per_chunk;
  size_t partial;  // weight and bias gradient partials per backward unit
};

size_t Round16(size_t n) { return (n + 15) / 16 * 16; }

// Rows of a w-wide tile that fill about kBandFloats, whole blocks of kLanes
// pixels where that costs few rows (the transposes' tails are scalar).
int BandRows(int w, int h) {
  constexpr int kBandFloats = 2048;  // 8 KiB, well inside L1
  int rows = std::max(1, kBandFloats / (w * kLanes));
  const int q = kLanes / std::gcd(w, kLanes);
  if (q <= 4) rows = (rows + q - 1) / q * q;
  return std::min(rows, h);
}

TilePlan MakeTilePlan(const ConvGeometry& g) {
  TilePlan l;
  l.k = g.kernel;
  l.s = g.stride;
  l.pad = g.pad;
  l.kk = l.k * l.k;
  l.in_h = g.in_h;
  l.in_w = g.in_w;
  l.oh = g.out_h();
  l.ow = g.out_w();
  l.m = g.out_c / g.in_c;
  l.in_c = g.in_c;
  l.batch = g.batch;
  l.tiles = (g.in_c + kLanes - 1) / kLanes;
  l.groups = (g.batch + kGroupSamples - 1) / kGroupSamples;
  l.hp = l.in_h + 2 * l.pad;
  l.wp = l.in_w + 2 * l.pad;
  // Input row py = s * a + ry reads output gradient rows a - u for
  // u <= (k - 1) / s; a runs up to (pad + in_h - 1) / s.
  l.bd = (l.k - 1) / l.s;
  l.rd = std::max((l.pad + l.in_h - 1) / l.s, l.oh - 1) + l.bd + 1;
  l.cd = std::max((l.pad + l.in_w - 1) / l.s, l.ow - 1) + l.bd + 1;
  l.in_plane = size_t(l.in_h) * l.in_w;
  l.out_plane = size_t(l.oh) * l.ow;
  l.out_band = BandRows(l.ow, l.oh);
  l.in_band = BandRows(l.in_w, l.in_h);
  const size_t lanes = kLanes;
  l.d_size = Round16(size_t(l.rd) * l.cd * lanes);
  l.t = 0;
  l.d = l.t + Round16(size_t(l.hp) * l.wp * lanes);
  l.x = l.d + l.d_size * l.m;
  l.w = l.x + Round16(std::max(size_t(l.in_band) * l.in_w, size_t(l.out_band) * l.ow) * lanes);
  l.partial = size_t(l.m) * (l.kk + 1) * lanes;
  l.per_chunk = l.w + Round16(l.partial);
  return l;
}

// w_tile[j][t] = the weights of tap t (t == kk: the bias) of output j of the
// tile's channels, zero in lanes past the last channel.
void LoadWeights(const TilePlan& l, const float* weight, const float* bias, int c0, int valid,
                 float* w_tile) {
  std::fill(w_tile, w_tile + l.partial, 0.0f);
  for (int i = 0; i < valid; ++i) {
    for (int j = 0; j < l.m; ++j) {
      const int o = (c0 + i) * l.m + j;
      float* wj = w_tile + size_t(j) * (l.kk + 1) * kLanes + i;
      for (int t = 0; t < l.kk; ++t) wj[t * kLanes] = weight[size_t(o) * l.kk + t];
      if (bias) wj[l.kk * kLanes] = bias[o];
    }
  }
}

template <int K>
inline void LoadTaps(const float* w_tile, Vec* w) {
#pragma GCC unroll 25
  for (int t = 0; t < K * K; ++t) w[t] = simd::Load(w_tile + t * kLanes);
}

// NB outputs along a row: tile points at the first one's top-left tap.
template <int K, int S, int NB>
inline void ForwardBlock(const float* tile, size_t row, const Vec* w, Vec bias, float* out) {
  Vec acc[NB];
#pragma GCC unroll 4
  for (int b = 0; b < NB; ++b) acc[b] = bias;
#pragma GCC unroll 5
  for (int ky = 0; ky < K; ++ky) {
#pragma GCC unroll 5
    for (int kx = 0; kx < K; ++kx) {
#pragma GCC unroll 4
      for (int b = 0; b < NB; ++b) {
        acc[b] += w[ky * K + kx] * simd::Load(tile + ky * row + (b * S + kx) * kLanes);
      }
    }
  }
#pragma GCC unroll 4
  for (int b = 0; b < NB; ++b) simd::Store(out + b * kLanes, acc[b]);
}

// Output rows [oy0, oy1) into out, which holds just those rows.
template <int K, int S>
void ForwardRows(const TilePlan& l, const float* tile, const float* w_tile, int oy0, int oy1,
                 float* out) {
  Vec w[K * K];
  LoadTaps<K>(w_tile, w);
  const Vec bias = simd::Load(w_tile + K * K * kLanes);
  const size_t row = size_t(l.wp) * kLanes;
  for (int oy = oy0; oy < oy1; ++oy) {
    const float* src = tile + oy * S * row;
    float* dst = out + size_t(oy - oy0) * l.ow * kLanes;
    int ox = 0;
    for (; ox + kBlock <= l.ow; ox += kBlock) {
      ForwardBlock<K, S, kBlock>(src + ox * S * kLanes, row, w, bias, dst + ox * kLanes);
    }
    for (; ox < l.ow; ++ox) {
      ForwardBlock<K, S, 1>(src + ox * S * kLanes, row, w, bias, dst + ox * kLanes);
    }
  }
}

// part[t] += sum over outputs of d_out * the input under tap t; part[kk]
// += sum of d_out.
template <int K, int S>
void WeightGradTile(const TilePlan& l, const float* tile, const float* d_tile, float* part) {
  Vec acc[K * K + 1];
#pragma GCC unroll 26
  for (int t = 0; t <= K * K; ++t) acc[t] = simd::Load(part + t * kLanes);
  const size_t row = size_t(l.wp) * kLanes;
  for (int oy = 0; oy < l.oh; ++oy) {
    const float* src = tile + oy * S * row;
    const float* dy = d_tile + (size_t(oy + l.bd) * l.cd + l.bd) * kLanes;
    for (int ox = 0; ox < l.ow; ++ox) {
      Vec d = simd::Load(dy + ox * kLanes);
      simd::KeepInRegister(d);
      const float* base = src + ox * S * kLanes;
#pragma GCC unroll 5
      for (int ky = 0; ky < K; ++ky) {
#pragma GCC unroll 5
        for (int kx = 0; kx < K; ++kx) {
          acc[ky * K + kx] += d * simd::Load(base + ky * row + kx * kLanes);
        }
      }
      acc[K * K] += d;
    }
  }
#pragma GCC unroll 26
  for (int t = 0; t <= K * K; ++t) simd::Store(part + t * kLanes, acc[t]);
}

// NB input pixels of phase (RY, RX) (padded row and column mod s), s columns
// apart: d_tile points at the output gradient that the first one's tap
// (RY, RX) reads, out at the first one's gradient.
template <int K, int S, int RY, int RX, int NB>
inline void InputGradBlock(const float* d_tile, size_t row, const Vec* w, bool add, float* out) {
  constexpr int kU = (K - 1 - RY) / S + 1, kV = (K - 1 - RX) / S + 1;
  Vec acc[NB];
#pragma GCC unroll 4
  for (int b = 0; b < NB; ++b) acc[b] = add ? simd::Load(out + b * S * kLanes) : Vec{};
#pragma GCC unroll 5
  for (int u = 0; u < kU; ++u) {
#pragma GCC unroll 5
    for (int v = 0; v < kV; ++v) {
      const Vec wv = w[(RY + S * u) * K + RX + S * v];
#pragma GCC unroll 4
      for (int b = 0; b < NB; ++b) {
        acc[b] += wv * simd::Load(d_tile - u * row + (b - v) * kLanes);
      }
    }
  }
#pragma GCC unroll 4
  for (int b = 0; b < NB; ++b) simd::Store(out + b * S * kLanes, acc[b]);
}

// Input row iy (padded row s * a + RY): its pixels of column phase RX, the
// first b with s * b + RX inside the padded row's interior to the last.
template <int K, int S, int RY, int RX>
void InputGradRow(const TilePlan& l, const float* d_tile, const Vec* w, bool add, int a,
                  float* out_row) {
  const int b_lo = std::max(0, l.pad - RX + S - 1) / S;
  const int last = l.pad + l.in_w - 1 - RX;
  if (last < 0) return;
  const int b_end = last / S + 1;
  const size_t row = size_t(l.cd) * kLanes;
  const float* dy = d_tile + (size_t(a + l.bd) * l.cd + l.bd) * kLanes;
  int b = b_lo;
  for (; b + kBlock <= b_end; b += kBlock) {
    InputGradBlock<K, S, RY, RX, kBlock>(dy + b * kLanes, row, w, add,
                                         out_row + (b * S + RX - l.pad) * kLanes);
  }
  for (; b < b_end; ++b) {
    InputGradBlock<K, S, RY, RX, 1>(dy + b * kLanes, row, w, add,
                                    out_row + (b * S + RX - l.pad) * kLanes);
  }
}

// Input rows [iy0, iy1) into out, which holds just those rows; row by row,
// both column phases of a row together, so out is written once in order.
template <int K, int S>
void InputGradRows(const TilePlan& l, const float* d_tile, const float* w_tile, bool add, int iy0,
                   int iy1, float* out) {
  Vec w[K * K];
  LoadTaps<K>(w_tile, w);
  for (int iy = iy0; iy < iy1; ++iy) {
    const int py = iy + l.pad;
    float* out_row = out + size_t(iy - iy0) * l.in_w * kLanes;
    if constexpr (S == 1) {
      InputGradRow<K, S, 0, 0>(l, d_tile, w, add, py, out_row);
    } else if (py % 2 == 0) {
      InputGradRow<K, S, 0, 0>(l, d_tile, w, add, py / 2, out_row);
      InputGradRow<K, S, 0, 1>(l, d_tile, w, add, py / 2, out_row);
    } else {
      InputGradRow<K, S, 1, 0>(l, d_tile, w, add, py / 2, out_row);
      InputGradRow<K, S, 1, 1>(l, d_tile, w, add, py / 2, out_row);
    }
  }
}

// The cursor of a tile's interior from its row first_row on.
TileCursor Interior(float* tile, int border, int width, int row_pixels, int first_row = 0) {
  return {tile + (size_t(border + first_row) * row_pixels + border) * kLanes, 0, width, row_pixels};
}

template <int K, int S>
void Forward(ThreadPool& pool, const TilePlan& l, const float* in, const float* weight,
             const float* bias, float* out, float* workspace) {
  pool.ParallelFor(int64_t{l.tiles} * l.batch, [&](int64_t begin, int64_t end, int chunk) {
    float* ws = workspace + l.per_chunk * chunk;
    float* tile = ws + l.t;
    std::fill(tile, ws + l.d, 0.0f);  // the border stays zero
    int loaded = -1;
    for (int64_t u = begin; u < end; ++u) {
      const int t = static_cast<int>(u / l.batch), n = static_cast<int>(u % l.batch);
      const int c0 = t * kLanes, valid = std::min(kLanes, l.in_c - c0);
      if (t != loaded) LoadWeights(l, weight, bias, c0, valid, ws + l.w);
      loaded = t;
      const float* planes = in + (size_t(n) * l.in_c + c0) * l.in_plane;
      int rows_in = 0;  // input rows in the tile so far
      for (int oy0 = 0; oy0 < l.oh; oy0 += l.out_band) {
        const int oy1 = std::min(l.oh, oy0 + l.out_band);
        const int need = std::min(l.in_h, (oy1 - 1) * S + K - l.pad);
        if (need > rows_in) {
          PlanesToTile(planes + size_t(rows_in) * l.in_w, l.in_plane, valid,
                       (need - rows_in) * l.in_w, Interior(tile, l.pad, l.in_w, l.wp, rows_in));
          rows_in = need;
        }
        for (int j = 0; j < l.m; ++j) {
          ForwardRows<K, S>(l, tile, ws + l.w + size_t(j) * (l.kk + 1) * kLanes, oy0, oy1,
                            ws + l.x);
          float* dst = out + ((size_t(n) * l.in_c + c0) * l.m + j) * l.out_plane;
          TileToPlanes({ws + l.x, 0, l.ow, l.ow}, (oy1 - oy0) * l.ow, valid, l.m * l.out_plane,
                       dst + size_t(oy0) * l.ow);
        }
      }
    }
  });
}

template <int K, int S>
void Backward(ThreadPool& pool, const TilePlan& l, const float* in, const float* weight,
              const float* d_out, float* d_in, float* d_weight, float* d_bias, float* workspace,
              float* partials) {
  pool.ParallelFor(int64_t{l.tiles} * l.groups, [&](int64_t begin, int64_t end, int chunk) {
    float* ws = workspace + l.per_chunk * chunk;
    float* tile = ws + l.t;
    std::fill(tile, ws + l.x, 0.0f);  // both tiles' borders stay zero
    int loaded = -1;
    for (int64_t u = begin; u < end; ++u) {
      const int t = static_cast<int>(u / l.groups), group = static_cast<int>(u % l.groups);
      const int c0 = t * kLanes, valid = std::min(kLanes, l.in_c - c0);
      if (d_in && t != loaded) LoadWeights(l, weight, nullptr, c0, valid, ws + l.w);
      loaded = t;
      float* part = partials + l.partial * u;
      if (d_weight) std::fill(part, part + l.partial, 0.0f);
      const int n_end = std::min(l.batch, (group + 1) * kGroupSamples);
      for (int n = group * kGroupSamples; n < n_end; ++n) {
        if (d_weight) {
          PlanesToTile(in + (size_t(n) * l.in_c + c0) * l.in_plane, l.in_plane, valid,
                       static_cast<int>(l.in_plane), Interior(tile, l.pad, l.in_w, l.wp));
        }
        for (int j = 0; j < l.m; ++j) {
          const float* dy = d_out + ((size_t(n) * l.in_c + c0) * l.m + j) * l.out_plane;
          PlanesToTile(dy, l.m * l.out_plane, valid, static_cast<int>(l.out_plane),
                       Interior(ws + l.d + l.d_size * j, l.bd, l.ow, l.cd));
          if (d_weight) {
            WeightGradTile<K, S>(l, tile, ws + l.d + l.d_size * j,
                                 part + size_t(j) * (l.kk + 1) * kLanes);
          }
        }
        if (!d_in) continue;
        float* dx = d_in + (size_t(n) * l.in_c + c0) * l.in_plane;
        for (int iy0 = 0; iy0 < l.in_h; iy0 += l.in_band) {
          const int iy1 = std::min(l.in_h, iy0 + l.in_band);
          for (int j = 0; j < l.m; ++j) {
            InputGradRows<K, S>(l, ws + l.d + l.d_size * j,
                                ws + l.w + size_t(j) * (l.kk + 1) * kLanes, j > 0, iy0, iy1,
                                ws + l.x);
          }
          TileToPlanes({ws + l.x, 0, l.in_w, l.in_w}, (iy1 - iy0) * l.in_w, valid, l.in_plane,
                       dx + size_t(iy0) * l.in_w);
        }
      }
    }
  });
  if (!d_weight) return;
  for (int t = 0; t < l.tiles; ++t) {
    const int c0 = t * kLanes, valid = std::min(kLanes, l.in_c - c0);
    for (int j = 0; j < l.m; ++j) {
      for (int tap = 0; tap <= l.kk; ++tap) {
        const size_t at = (size_t(j) * (l.kk + 1) + tap) * kLanes;
        Vec sum{};
        for (int group = 0; group < l.groups; ++group) {
          sum += simd::Load(partials + l.partial * (size_t(t) * l.groups + group) + at);
        }
        for (int i = 0; i < valid; ++i) {
          const int o = (c0 + i) * l.m + j;
          if (tap < l.kk) {
            d_weight[size_t(o) * l.kk + tap] = sum[i];
          } else if (d_bias) {
            d_bias[o] = sum[i];
          }
        }
      }
    }
  }
}

}  // namespace

bool DepthwiseTiledHandles(const ConvGeometry& g) {
  return g.groups == g.in_c && g.groups > 1 && g.out_c % g.in_c == 0 &&
         (g.kernel == 3 || g.kernel == 5) && (g.stride == 1 || g.stride == 2) && g.pad < g.kernel &&
         g.out_h() >= 1 && g.out_w() >= 1;
}

size_t DepthwiseTiledWorkspaceFloats(const ConvGeometry& g, int threads) {
  const TilePlan l = MakeTilePlan(g);
  return l.per_chunk * static_cast<size_t>(std::max(1, threads)) +
         l.partial * size_t(l.tiles) * l.groups;
}

void DepthwiseTiledForward(ThreadPool& pool, const ConvGeometry& g, const float* in,
                           const float* weight, const float* bias, float* out, float* workspace) {
  const TilePlan l = MakeTilePlan(g);
  if (l.k == 3 && l.s == 1) return Forward<3, 1>(pool, l, in, weight, bias, out, workspace);
  if (l.k == 3) return Forward<3, 2>(pool, l, in, weight, bias, out, workspace);
  if (l.s == 1) return Forward<5, 1>(pool, l, in, weight, bias, out, workspace);
  Forward<5, 2>(pool, l, in, weight, bias, out, workspace);
}

void DepthwiseTiledBackward(ThreadPool& pool, const ConvGeometry& g, const float* in,
                            const float* weight, const float* d_out, float* d_in, float* d_weight,
                            float* d_bias, float* workspace) {
  const TilePlan l = MakeTilePlan(g);
  float* partials = workspace + l.per_chunk * static_cast<size_t>(pool.size());
  auto run = [&](auto kernel) {
    kernel(pool, l, in, weight, d_out, d_in, d_weight, d_bias, workspace, partials);
  };
  if (l.k == 3 && l.s == 1) return run(Backward<3, 1>);
  if (l.k == 3) return run(Backward<3, 2>);
  if (l.s == 1) return run(Backward<5, 1>);
  run(Backward<5, 2>);
}

}  // namespace mt::kernels
