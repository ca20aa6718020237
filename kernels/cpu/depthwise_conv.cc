#include "kernels/cpu/depthwise_conv.h"

#include <algorithm>
#include <array>
#include <utility>

#include "kernels/cpu/channel_tile.h"
#include "kernels/cpu/depthwise_tiled.h"
#include "kernels/cpu/simd.h"
#include "kernels/cpu/thread_pool.h"

namespace mt::kernels {
namespace {

using simd::kLanes;
using simd::Vec;

constexpr int kMaxKernel = 7;
constexpr int kMaxStride = 4;
constexpr int kMaxTaps = kMaxKernel * kMaxKernel;
constexpr int kMaxPhases = kMaxStride * kMaxStride;
// Taps per SumTaps call: 25 covers a 5x5 kernel in one pass over the outputs.
constexpr int kSumTaps = 25;
// Taps per TapDots call: one accumulator each, plus the output gradient and
// the tap's operand, must stay in registers.
constexpr int kDotTaps = simd::kRegisters >= 32 ? 25 : 12;
// Vectors of outputs per SumTaps block.
constexpr int kSumVectors = 4;

size_t RoundUp(size_t x, size_t to) { return (x + to - 1) / to * to; }

struct Plan {
  int s, k, kk, pad, in_h, in_w, oh, ow, m, in_c;
  int hp, wp;    // padded plane
  int hps, wps;  // a phase plane
  int qv;        // vectors covering the oh * wps wide outputs
  int ps;        // stride between phase planes of the padded input
  int front;     // zeros before the wide output gradient: the largest in-phase offset
  int dps;       // stride between phase planes of the padded input gradient
  int phases;    // s * s
  // Tap t = ky * k + kx reads phase tap_phase[t] at tap_inner[t] within it.
  std::array<int, kMaxTaps> tap_phase, tap_inner, tap_off;  // tap_off: from the first phase
  // Taps sorted by phase: by_phase[phase_begin[r] .. phase_begin[r + 1]) are
  // phase r's, and gather_off[i] = -tap_inner[by_phase[i]].
  std::array<int, kMaxTaps> by_phase, gather_off;
  std::array<int, kMaxPhases + 1> phase_begin;
  // Offsets inside a chunk's slice of the workspace.
  size_t p, y, z, dp, dw, ws, per_chunk;
};

Plan MakePlan(const ConvGeometry& g) {
  Plan l;
  l.s = g.stride;
  l.k = g.kernel;
  l.kk = l.k * l.k;
  l.pad = g.pad;
  l.in_h = g.in_h;
  l.in_w = g.in_w;
  l.oh = g.out_h();
  l.ow = g.out_w();
  l.in_c = g.in_c;
  l.m = g.out_c / g.in_c;
  l.hp = g.in_h + 2 * g.pad;
  l.wp = g.in_w + 2 * g.pad;
  l.hps = (l.hp + l.s - 1) / l.s;
  l.wps = (l.wp + l.s - 1) / l.s;
  l.phases = l.s * l.s;
  const size_t lanes = kLanes;
  l.qv = static_cast<int>(RoundUp(size_t(l.oh) * l.wps, lanes) / lanes);
  int max_inner = 0;
  for (int t = 0; t < l.kk; ++t) {
    const int ky = t / l.k, kx = t % l.k;
    l.tap_phase[t] = (ky % l.s) * l.s + kx % l.s;
    l.tap_inner[t] = (ky / l.s) * l.wps + kx / l.s;
    max_inner = std::max(max_inner, l.tap_inner[t]);
  }
  const size_t plane = size_t(l.hps) * l.wps;
  // Row copies write up to a vector past a row (CopyRowZeroTail), and the
  // kernels read up to max_inner + qv vectors into a phase.
  l.ps =
      static_cast<int>(RoundUp(std::max(plane + lanes, max_inner + size_t(l.qv) * lanes), lanes));
  l.front = static_cast<int>(RoundUp(max_inner, lanes));
  l.dps = static_cast<int>(RoundUp(plane + lanes, lanes));
  for (int t = 0; t < l.kk; ++t) l.tap_off[t] = l.tap_phase[t] * l.ps + l.tap_inner[t];
  int i = 0;
  for (int r = 0; r < l.phases; ++r) {
    l.phase_begin[r] = i;
    for (int t = 0; t < l.kk; ++t) {
      if (l.tap_phase[t] != r) continue;
      l.by_phase[i] = t;
      l.gather_off[i] = -l.tap_inner[t];
      ++i;
    }
  }
  l.phase_begin[l.phases] = i;
  // The wide output gradient: front zeros, then oh rows of wps, then zeros
  // as far as the gather (up to a phase plane and a vector) and the dot
  // products (qv vectors) read.
  const size_t z_len = l.front + std::max(plane, size_t(l.qv) * lanes) + 2 * lanes;
  l.p = 0;
  l.y = l.p + RoundUp(size_t(l.phases) * l.ps, 16);
  l.z = l.y + RoundUp(size_t(l.qv) * lanes + lanes, 16);
  l.dp = l.z + RoundUp(z_len, 16);
  l.dw = l.dp + RoundUp(size_t(l.phases) * l.dps, 16);
  // Per output of a channel: kk vector partials of the weight gradient and
  // one float of the bias gradient.
  l.ws = l.dw + RoundUp(size_t(l.m) * (size_t(l.kk) * lanes + 1), 16);
  l.per_chunk = l.ws + RoundUp(kMaxTaps, 16);
  return l;
}

// out[v*L..] = (add ? out[v*L..] : bias) + sum over t < NT of
// w[t] * base[off[t] + v*L..], for `vectors` vectors.
template <int NT, int VB>
inline void SumTapsBlock(const float* base, const int* off, const float* w, bool add, float bias,
                         float* out) {
  Vec acc[VB];
#pragma GCC unroll 4
  for (int j = 0; j < VB; ++j) acc[j] = add ? simd::Load(out + j * kLanes) : simd::Splat(bias);
#pragma GCC unroll 25
  for (int t = 0; t < NT; ++t) {
    const float* src = base + off[t];
    const Vec wv = simd::Splat(w[t]);
#pragma GCC unroll 4
    for (int j = 0; j < VB; ++j) acc[j] += wv * simd::Load(src + j * kLanes);
  }
#pragma GCC unroll 4
  for (int j = 0; j < VB; ++j) simd::Store(out + j * kLanes, acc[j]);
}

template <int NT>
void SumTaps(const float* base, const int* off, const float* w, bool add, float bias, int vectors,
             float* out) {
  int v = 0;
  for (; v + kSumVectors <= vectors; v += kSumVectors) {
    SumTapsBlock<NT, kSumVectors>(base + v * kLanes, off, w, add, bias, out + v * kLanes);
  }
  for (; v < vectors; ++v) {
    SumTapsBlock<NT, 1>(base + v * kLanes, off, w, add, bias, out + v * kLanes);
  }
}

// acc[t][lanes] += sum over v < vectors of z[v*L..] * base[off[t] + v*L..].
template <int NT>
void TapDots(const float* z, const float* base, const int* off, int vectors, float* acc) {
  Vec a[NT];
#pragma GCC unroll 25
  for (int t = 0; t < NT; ++t) a[t] = simd::Load(acc + t * kLanes);
  for (int v = 0; v < vectors; ++v) {
    Vec zv = simd::Load(z + v * kLanes);
    simd::KeepInRegister(zv);
#pragma GCC unroll 25
    for (int t = 0; t < NT; ++t) a[t] += zv * simd::Load(base + off[t] + v * kLanes);
  }
#pragma GCC unroll 25
  for (int t = 0; t < NT; ++t) simd::Store(acc + t * kLanes, a[t]);
}

using SumFn = void (*)(const float*, const int*, const float*, bool, float, int, float*);
using DotFn = void (*)(const float*, const float*, const int*, int, float*);

template <int... I>
constexpr std::array<SumFn, sizeof...(I)> MakeSumTable(std::integer_sequence<int, I...>) {
  return {&SumTaps<I + 1>...};
}
template <int... I>
constexpr std::array<DotFn, sizeof...(I)> MakeDotTable(std::integer_sequence<int, I...>) {
  return {&TapDots<I + 1>...};
}
constexpr auto kSumTable = MakeSumTable(std::make_integer_sequence<int, kSumTaps>{});
constexpr auto kDotTable = MakeDotTable(std::make_integer_sequence<int, kDotTaps>{});

// SumTaps for any number of taps, in blocks; no taps gives bias (or leaves
// out as it is when adding).
void SumAnyTaps(const float* base, const int* off, const float* w, int taps, bool add, float bias,
                int vectors, float* out) {
  if (taps == 0) {
    if (!add) std::fill(out, out + size_t(vectors) * kLanes, bias);
    return;
  }
  for (int t0 = 0; t0 < taps; t0 += kSumTaps) {
    const int n = std::min(kSumTaps, taps - t0);
    kSumTable[n - 1](base, off + t0, w + t0, add || t0 > 0, bias, vectors, out);
  }
}

void DotAnyTaps(const float* z, const float* base, const int* off, int taps, int vectors,
                float* acc) {
  for (int t0 = 0; t0 < taps; t0 += kDotTaps) {
    const int n = std::min(kDotTaps, taps - t0);
    kDotTable[n - 1](z, base, off + t0, vectors, acc + t0 * kLanes);
  }
}

// The stride-2 split of a row into its two column phases uses vector
// shuffles (channel_tile.h): a scalar strided loop made stride-2 layers 3x
// slower than stride 1.
using channel_tile::Evens;
using channel_tile::Interleave;
using channel_tile::kLaneSeq;
using channel_tile::Odds;

// dst_even[j] = src[2j], dst_odd[j] = src[2j + 1] for the n floats of src.
void SplitRow2(const float* src, int n, float* dst_even, float* dst_odd) {
  int j = 0;
  for (; 2 * (j + kLanes) <= n; j += kLanes) {
    const Vec a = simd::Load(src + 2 * j), b = simd::Load(src + 2 * j + kLanes);
    simd::Store(dst_even + j, Evens(a, b, kLaneSeq));
    simd::Store(dst_odd + j, Odds(a, b, kLaneSeq));
  }
  for (int i = 2 * j; i < n; ++i) (i % 2 ? dst_odd : dst_even)[i / 2] = src[i];
}

// The inverse of SplitRow2.
void MergeRow2(const float* even, const float* odd, int n, float* dst) {
  int j = 0;
  for (; 2 * (j + kLanes) <= n; j += kLanes) {
    const Vec e = simd::Load(even + j), o = simd::Load(odd + j);
    simd::Store(dst + 2 * j, Interleave<0>(e, o, kLaneSeq));
    simd::Store(dst + 2 * j + kLanes, Interleave<kLanes / 2>(e, o, kLaneSeq));
  }
  for (int i = 2 * j; i < n; ++i) dst[i] = (i % 2 ? odd : even)[i / 2];
}

// Copies one input plane into the interiors of its phase planes. Borders and
// gaps stay zero from the start of the call: with stride 1, the copies' zero
// tails land only on borders and on rows copied afterwards.
void SplitPhases(const Plan& l, const float* in, float* p) {
  if (l.s == 1) {
    for (int iy = 0; iy < l.in_h; ++iy) {
      simd::CopyRowZeroTail(p + (iy + l.pad) * l.wp + l.pad, in + iy * l.in_w, l.in_w);
    }
    return;
  }
  for (int iy = 0; iy < l.in_h; ++iy) {
    const int py = iy + l.pad;
    const float* src = in + iy * l.in_w;
    float* row = p + (py % l.s) * l.s * l.ps + (py / l.s) * l.wps;
    if (l.s == 2) {
      // Input column ix is padded column ix + pad: phase (ix + pad) % 2.
      float* even = row + (l.pad % 2) * l.ps + l.pad / 2;
      float* odd = row + ((l.pad + 1) % 2) * l.ps + (l.pad + 1) / 2;
      SplitRow2(src, l.in_w, even, odd);
      continue;
    }
    for (int rx = 0; rx < l.s; ++rx) {
      // The first input column whose padded column falls in phase rx.
      const int ix0 = ((rx - l.pad) % l.s + l.s) % l.s;
      float* dst = row + rx * l.ps + (ix0 + l.pad) / l.s;
      for (int ix = ix0, j = 0; ix < l.in_w; ix += l.s, ++j) dst[j] = src[ix];
    }
  }
}

// The inverse of SplitPhases: the interior of the padded phase planes dp
// (stride dps) back to one plane.
void MergePhases(const Plan& l, const float* dp, float* out) {
  if (l.s == 1) {
    for (int iy = 0; iy < l.in_h; ++iy) {
      simd::CopyShort(out + iy * l.in_w, dp + (iy + l.pad) * l.wp + l.pad, l.in_w);
    }
    return;
  }
  for (int iy = 0; iy < l.in_h; ++iy) {
    const int py = iy + l.pad;
    float* dst = out + iy * l.in_w;
    const float* row = dp + (py % l.s) * l.s * l.dps + (py / l.s) * l.wps;
    if (l.s == 2) {
      const float* even = row + (l.pad % 2) * l.dps + l.pad / 2;
      const float* odd = row + ((l.pad + 1) % 2) * l.dps + (l.pad + 1) / 2;
      MergeRow2(even, odd, l.in_w, dst);
      continue;
    }
    for (int rx = 0; rx < l.s; ++rx) {
      const int ix0 = ((rx - l.pad) % l.s + l.s) % l.s;
      const float* src = row + rx * l.dps + (ix0 + l.pad) / l.s;
      for (int ix = ix0, j = 0; ix < l.in_w; ix += l.s, ++j) dst[ix] = src[j];
    }
  }
}

// The tiled kernels (depthwise_tiled.h) pay two transposes per pixel; long
// rows keep this file's row kernels' lanes busy, and there those are faster:
// the forward pass from output rows of one vector (16x16 planes in
// mobilenet-tiny's training step on AVX-512), the input gradient from input
// rows of two (tests/bench/depthwise_conv_bench). The weight gradient is
// faster tiled on every plane.
bool TiledForward(const ConvGeometry& g) { return DepthwiseTiledHandles(g) && g.out_w() < kLanes; }
bool TiledInputGrad(const ConvGeometry& g) {
  return DepthwiseTiledHandles(g) && g.in_w < 2 * kLanes;
}

}  // namespace

bool DepthwiseConvHandles(const ConvGeometry& g) {
  return g.groups == g.in_c && g.groups > 1 && g.out_c % g.in_c == 0 && g.kernel <= kMaxKernel &&
         g.stride <= kMaxStride && g.out_h() >= 1 && g.out_w() >= 1;
}

size_t DepthwiseConvWorkspaceFloats(const ConvGeometry& g, int threads) {
  size_t floats = 0;
  if (DepthwiseTiledHandles(g)) floats = DepthwiseTiledWorkspaceFloats(g, threads);
  if (!TiledForward(g) || !TiledInputGrad(g)) {
    floats = std::max(floats, MakePlan(g).per_chunk * static_cast<size_t>(std::max(1, threads)));
  }
  return floats;
}

void DepthwiseConvForward(ThreadPool& pool, const ConvGeometry& g, const float* in,
                          const float* weight, const float* bias, float* out, float* workspace) {
  if (TiledForward(g)) return DepthwiseTiledForward(pool, g, in, weight, bias, out, workspace);
  const Plan l = MakePlan(g);
  const size_t in_plane = size_t(l.in_h) * l.in_w, out_plane = size_t(l.oh) * l.ow;
  pool.ParallelFor(int64_t{g.batch} * l.in_c, [&](int64_t begin, int64_t end, int chunk) {
    float* ws = workspace + l.per_chunk * chunk;
    float* p = ws + l.p;
    float* y = ws + l.y;
    std::fill(p, p + size_t(l.phases) * l.ps, 0.0f);
    for (int64_t plane = begin; plane < end; ++plane) {
      const int c = static_cast<int>(plane % l.in_c);
      const int64_t n = plane / l.in_c;
      SplitPhases(l, in + plane * in_plane, p);
      for (int j = 0; j < l.m; ++j) {
        const int o = c * l.m + j;
        SumAnyTaps(p, l.tap_off.data(), weight + size_t(o) * l.kk, l.kk, false,
                   bias ? bias[o] : 0.0f, l.qv, y);
        float* dst = out + (size_t(n) * g.out_c + o) * out_plane;
        for (int oy = 0; oy < l.oh; ++oy) simd::CopyShort(dst + oy * l.ow, y + oy * l.wps, l.ow);
      }
    }
  });
}

void DepthwiseConvBackward(ThreadPool& pool, const ConvGeometry& g, const float* in,
                           const float* weight, const float* d_out, float* d_in, float* d_weight,
                           float* d_bias, float* workspace) {
  if (DepthwiseTiledHandles(g)) {
    const bool tiled_d_in = TiledInputGrad(g);
    if (d_weight || tiled_d_in) {
      DepthwiseTiledBackward(pool, g, in, weight, d_out, tiled_d_in ? d_in : nullptr, d_weight,
                             d_bias, workspace);
    }
    if (tiled_d_in || !d_in) return;
    d_weight = d_bias = nullptr;  // the row kernels below compute d_in alone
  }
  const Plan l = MakePlan(g);
  const size_t in_plane = size_t(l.in_h) * l.in_w, out_plane = size_t(l.oh) * l.ow;
  const size_t dw_stride = size_t(l.kk) * kLanes;
  pool.ParallelFor(l.in_c, [&](int64_t begin, int64_t end, int chunk) {
    float* ws = workspace + l.per_chunk * chunk;
    float* p = ws + l.p;
    float* z = ws + l.z;
    float* dp = ws + l.dp;
    float* dw = ws + l.dw;
    float* db = dw + size_t(l.m) * dw_stride;
    float* w_sorted = ws + l.ws;
    // Borders, gaps and tails stay zero for the whole call; only interiors
    // are rewritten per plane.
    std::fill(p, p + size_t(l.phases) * l.ps, 0.0f);
    std::fill(z, dp, 0.0f);
    for (int64_t c = begin; c < end; ++c) {
      std::fill(dw, db + l.m, 0.0f);
      for (int n = 0; n < g.batch; ++n) {
        if (d_weight) SplitPhases(l, in + (size_t(n) * l.in_c + c) * in_plane, p);
        for (int j = 0; j < l.m; ++j) {
          const int o = static_cast<int>(c) * l.m + j;
          const float* dy = d_out + (size_t(n) * g.out_c + o) * out_plane;
          // The output gradient in the wide layout; its thrown-away columns
          // stay zero, so they add nothing to any gradient.
          for (int oy = 0; oy < l.oh; ++oy) {
            simd::CopyRowZeroTail(z + l.front + oy * l.wps, dy + oy * l.ow, l.ow);
          }
          if (d_weight) {
            DotAnyTaps(z + l.front, p, l.tap_off.data(), l.kk, l.qv, dw + j * dw_stride);
            db[j] += simd::Sum(dy, static_cast<int>(out_plane));
          }
          if (!d_in) continue;
          const float* w = weight + size_t(o) * l.kk;
          for (int i = 0; i < l.kk; ++i) w_sorted[i] = w[l.by_phase[i]];
          for (int r = 0; r < l.phases; ++r) {
            // Only the phase rows inside the unpadded image are needed.
            const int ry = r / l.s;
            const int y_lo = (std::max(0, l.pad - ry) + l.s - 1) / l.s;
            const int y_hi = (l.pad + l.in_h - 1 - ry) / l.s;  // inclusive
            if (l.pad + l.in_h - 1 - ry < 0 || y_hi < y_lo) continue;
            const int start = y_lo * l.wps;
            const int vectors = ((y_hi - y_lo + 1) * l.wps + kLanes - 1) / kLanes;
            const int b = l.phase_begin[r];
            SumAnyTaps(z + l.front + start, l.gather_off.data() + b, w_sorted + b,
                       l.phase_begin[r + 1] - b, j > 0, 0.0f, vectors,
                       dp + size_t(r) * l.dps + start);
          }
        }
        if (d_in) MergePhases(l, dp, d_in + (size_t(n) * l.in_c + c) * in_plane);
      }
      if (!d_weight) continue;
      for (int j = 0; j < l.m; ++j) {
        const int o = static_cast<int>(c) * l.m + j;
        for (int t = 0; t < l.kk; ++t) {
          d_weight[size_t(o) * l.kk + t] =
              simd::ReduceAdd(simd::Load(dw + j * dw_stride + t * kLanes));
        }
        if (d_bias) d_bias[o] = db[j];
      }
    }
  });
}

}  // namespace mt::kernels
