#include "kernels/cpu/conv1x1.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include "kernels/cpu/simd.h"
#include "kernels/cpu/thread_pool.h"

namespace mt::kernels {
namespace {

using simd::kLanes;
using simd::Vec;

constexpr bool kManyRegisters = simd::kRegisters >= 32;
// Rows x vectors accumulators, plus the row broadcasts and one vector, fit
// in the register file.
constexpr int kRows = kManyRegisters ? 4 : 3;
constexpr int kVecs = kManyRegisters ? 6 : 4;
// Position vectors per weight-gradient tile: its inputs stay in L2 while
// every output block passes over them.
constexpr int kTile = 16;

// y[j][r * hw] = bias[r] + sum over k of w[r * w_row + k * w_k] * x[j][k * hw]
// for R rows and V position vectors.
struct MatArgs {
  const float* w;
  int w_row, w_k, k_count;
  size_t hw;
  const float* bias;
  const float* const* x;
  float* const* y;
};

template <int R, int V>
void MatBlock(const MatArgs& a) {
  Vec acc[R][V];
  for (int r = 0; r < R; ++r) {
    const Vec b = a.bias ? simd::Splat(a.bias[r]) : Vec{};
    for (int j = 0; j < V; ++j) acc[r][j] = b;
  }
  const float* xs[V];
  for (int j = 0; j < V; ++j) xs[j] = a.x[j];
  const float* w = a.w;
  for (int k = 0; k < a.k_count; ++k, w += a.w_k) {
    Vec wv[R];
    for (int r = 0; r < R; ++r) {
      wv[r] = simd::Splat(w[r * a.w_row]);
      simd::KeepInRegister(wv[r]);
    }
    for (int j = 0; j < V; ++j) {
      Vec xv = simd::Load(xs[j] + k * a.hw);
      simd::KeepInRegister(xv);
      for (int r = 0; r < R; ++r) acc[r][j] += wv[r] * xv;
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int j = 0; j < V; ++j) simd::Store(a.y[j] + r * a.hw, acc[r][j]);
  }
}

// part[(o0 + r) * ld + c0 + j] += sum over tile vectors t of
// dy[t][(o0 + r) * hw] * x[t][(c0 + j) * hw], for R output and C input
// channels.
struct GradArgs {
  const float* const* dy;
  const float* const* x;
  int count;
  size_t hw;
  int o0, c0, ld;
  float* part;
};

template <int R, int C>
void GradBlock(const GradArgs& a) {
  Vec acc[R][C];
  for (int r = 0; r < R; ++r) {
    for (int j = 0; j < C; ++j) acc[r][j] = Vec{};
  }
  for (int t = 0; t < a.count; ++t) {
    Vec dv[R];
    for (int r = 0; r < R; ++r) {
      dv[r] = simd::Load(a.dy[t] + (a.o0 + r) * a.hw);
      simd::KeepInRegister(dv[r]);
    }
    for (int j = 0; j < C; ++j) {
      Vec xv = simd::Load(a.x[t] + (a.c0 + j) * a.hw);
      simd::KeepInRegister(xv);
      for (int r = 0; r < R; ++r) acc[r][j] += dv[r] * xv;
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int j = 0; j < C; ++j) {
      float* p = a.part + (size_t(a.o0 + r) * a.ld + a.c0 + j) * kLanes;
      simd::Store(p, simd::Load(p) + acc[r][j]);
    }
  }
}

using MatFn = void (*)(const MatArgs&);
using GradFn = void (*)(const GradArgs&);

template <size_t... I>
constexpr std::array<MatFn, sizeof...(I)> MatTable(std::index_sequence<I...>) {
  return {&MatBlock<int(I) / kVecs + 1, int(I) % kVecs + 1>...};
}
template <size_t... I>
constexpr std::array<GradFn, sizeof...(I)> GradTable(std::index_sequence<I...>) {
  return {&GradBlock<int(I) / kVecs + 1, int(I) % kVecs + 1>...};
}
constexpr auto kMat = MatTable(std::make_index_sequence<kRows * kVecs>{});
constexpr auto kGrad = GradTable(std::make_index_sequence<kRows * kVecs>{});

// Position vector v of the batch flattened: its sample's channel-0 address.
struct Positions {
  int per_sample;  // vectors per plane
  size_t hw;
  size_t Offset(int64_t v, int channels) const {
    const int64_t n = v / per_sample;
    return size_t(n) * channels * hw + size_t(v % per_sample) * kLanes;
  }
};

// y = W x (transposed when w_k != 1) over all position vectors of the batch.
void MatAll(ThreadPool& pool, const Positions& pos, int64_t vectors, const float* x, int x_c,
            float* y, int y_c, const float* w, int w_row, int w_k, const float* bias) {
  const int64_t blocks = (vectors + kVecs - 1) / kVecs;
  pool.ParallelFor(blocks, [&](int64_t b0, int64_t b1, int) {
    const float* xs[kVecs];
    float* ys[kVecs];
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t v0 = b * kVecs;
      const int v = int(std::min<int64_t>(kVecs, vectors - v0));
      for (int j = 0; j < v; ++j) {
        xs[j] = x + pos.Offset(v0 + j, x_c);
        ys[j] = y + pos.Offset(v0 + j, y_c);
      }
      for (int r0 = 0; r0 < y_c; r0 += kRows) {
        const int r = std::min(kRows, y_c - r0);
        for (int j = 0; j < v; ++j) ys[j] += size_t(r0) * pos.hw;
        const MatArgs a{w + size_t(r0) * w_row,     w_row, w_k, x_c, pos.hw,
                        bias ? bias + r0 : nullptr, xs,    ys};
        kMat[(r - 1) * kVecs + (v - 1)](a);
        for (int j = 0; j < v; ++j) ys[j] -= size_t(r0) * pos.hw;
      }
    }
  });
}

}  // namespace

bool Conv1x1Handles(const ConvGeometry& g) {
  const int hw = g.in_h * g.in_w;
  return g.groups == 1 && g.kernel == 1 && g.stride == 1 && g.pad == 0 && g.in_c > 0 &&
         g.out_c > 0 && hw > 0 && hw % kLanes == 0;
}

size_t Conv1x1WorkspaceFloats(const ConvGeometry& g, int) {
  return (size_t(g.out_c) * g.in_c + g.out_c) * kLanes;
}

void Conv1x1Forward(ThreadPool& pool, const ConvGeometry& g, const float* in, const float* weight,
                    const float* bias, float* out, float*) {
  const Positions pos{g.in_h * g.in_w / kLanes, size_t(g.in_h) * g.in_w};
  MatAll(pool, pos, int64_t(g.batch) * pos.per_sample, in, g.in_c, out, g.out_c, weight, g.in_c, 1,
         bias);
}

void Conv1x1Backward(ThreadPool& pool, const ConvGeometry& g, const float* in, const float* weight,
                     const float* d_out, float* d_in, float* d_weight, float* d_bias,
                     float* workspace) {
  const Positions pos{g.in_h * g.in_w / kLanes, size_t(g.in_h) * g.in_w};
  const int64_t vectors = int64_t(g.batch) * pos.per_sample;
  const int ic = g.in_c, oc = g.out_c;
  if (d_in) MatAll(pool, pos, vectors, d_out, oc, d_in, ic, weight, 1, ic, nullptr);
  if (!d_weight && !d_bias) return;
  float* part = workspace;
  float* bpart = workspace + size_t(oc) * ic * kLanes;
  const int row_blocks = (oc + kRows - 1) / kRows;
  pool.ParallelFor(row_blocks, [&](int64_t rb0, int64_t rb1, int) {
    const int o_begin = int(rb0) * kRows, o_end = std::min(oc, int(rb1) * kRows);
    std::fill(part + size_t(o_begin) * ic * kLanes, part + size_t(o_end) * ic * kLanes, 0.0f);
    std::fill(bpart + size_t(o_begin) * kLanes, bpart + size_t(o_end) * kLanes, 0.0f);
    const float* dys[kTile];
    const float* xs[kTile];
    for (int64_t t0 = 0; t0 < vectors; t0 += kTile) {
      const int count = int(std::min<int64_t>(kTile, vectors - t0));
      for (int t = 0; t < count; ++t) {
        dys[t] = d_out + pos.Offset(t0 + t, oc);
        xs[t] = in + pos.Offset(t0 + t, ic);
      }
      for (int o = o_begin; d_bias && o < o_end; ++o) {
        Vec s = simd::Load(bpart + size_t(o) * kLanes);
        for (int t = 0; t < count; ++t) s += simd::Load(dys[t] + size_t(o) * pos.hw);
        simd::Store(bpart + size_t(o) * kLanes, s);
      }
      for (int o0 = o_begin; d_weight && o0 < o_end; o0 += kRows) {
        const int r = std::min(kRows, o_end - o0);
        for (int c0 = 0; c0 < ic; c0 += kVecs) {
          const int c = std::min(kVecs, ic - c0);
          kGrad[(r - 1) * kVecs + (c - 1)](GradArgs{dys, xs, count, pos.hw, o0, c0, ic, part});
        }
      }
    }
    for (int o = o_begin; o < o_end; ++o) {
      for (int c = 0; d_weight && c < ic; ++c) {
        d_weight[size_t(o) * ic + c] =
            simd::ReduceAdd(simd::Load(part + (size_t(o) * ic + c) * kLanes));
      }
      if (d_bias) d_bias[o] = simd::ReduceAdd(simd::Load(bpart + size_t(o) * kLanes));
    }
  });
}

}  // namespace mt::kernels
