#include "kernels/cpu/direct_conv.h"

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
// Register blocks: accumulators plus the operands loaded per tap must fit in
// the register file, or the compiler spills and the kernel turns load-bound.
constexpr int kFwdMaxOutputs = kManyRegisters ? 8 : 4;  // output channels per block
constexpr int kFwdMaxVectors = kManyRegisters ? 4 : 3;  // vectors of positions per block
constexpr int kFwdMaxAcc = kManyRegisters ? 24 : 12;
constexpr int kDwMaxOutputs = kManyRegisters ? 4 : 2;  // output channels per block
constexpr int kDwMaxTaps = kManyRegisters ? 6 : 4;     // taps per block
// Samples per weight-gradient kernel call, at most: the accumulators stay in
// registers across them, so small outputs (LeNet's second conv has 9 vectors
// per channel) still give each call enough work to amortise its set-up.
constexpr int kMaxGroup = 4;
constexpr int kGroupVectors = 48;
// With scalar partials (below), each block's accumulators are reduced
// across lanes after every group, which only pays off when the outputs are
// long; on small outputs (8x8 and less, with 64+ channels) im2col + GEMM
// was faster backward, while direct stayed faster forward on every shape.
constexpr int kMinVectorsScalarPartials = 16;
// Weight-gradient partial sums are kept as whole vectors (reduced across
// lanes once, at the end) while they fit in L2; bigger layers reduce each
// block's accumulators as they go.
constexpr size_t kMaxVectorPartials = size_t{1} << 16;

size_t RoundUp(size_t x, size_t to) { return (x + to - 1) / to * to; }

// Sizes of the wide layout and where each chunk's scratch lives.
struct Plan {
  int k, pad, in_c, oc, in_h, in_w;
  int hp, wp, oh, ow;
  int patch, kk;
  int qv;                              // vectors covering the oh * wp wide outputs
  int dv;                              // vectors covering the hp * wp wide input positions
  int max_off;                         // offset of the last tap
  int front;                           // zeros before each output-gradient plane: max_off rounded
                                       // up, so the planes themselves start aligned
  int ps;                              // stride of a padded input plane
  int zs;                              // stride of a zero-extended output-gradient plane
  int group;                           // samples per weight-gradient kernel call
  bool vector_partials;                // weight-gradient partials as vectors, or scalars
  size_t p_stride;                     // floats between the padded inputs of a group's samples
  size_t z_stride;                     // floats between the output gradients of a group's samples
  size_t flipped, shared;              // shared: weights flipped and transposed for d_in
  size_t p, y, dp, dw, db, per_chunk;  // offsets inside a chunk's slice
};

Plan MakePlan(const ConvGeometry& g) {
  Plan l;
  l.k = g.kernel;
  l.pad = g.pad;
  l.in_c = g.in_c;
  l.oc = g.out_c;
  l.in_h = g.in_h;
  l.in_w = g.in_w;
  l.hp = g.in_h + 2 * g.pad;
  l.wp = g.in_w + 2 * g.pad;
  l.oh = g.out_h();
  l.ow = g.out_w();
  l.kk = l.k * l.k;
  l.patch = g.patch();
  const size_t lanes = kLanes;
  l.qv = static_cast<int>((size_t(l.oh) * l.wp + lanes - 1) / lanes);
  l.dv = static_cast<int>((size_t(l.hp) * l.wp + lanes - 1) / lanes);
  l.max_off = (l.k - 1) * l.wp + (l.k - 1);
  l.front = static_cast<int>(RoundUp(l.max_off, lanes));
  // Row copies may write up to a vector past a row's end (CopyRowZeroTail).
  l.ps = static_cast<int>(RoundUp(
      std::max(size_t(l.hp) * l.wp + lanes, size_t(l.max_off) + size_t(l.qv) * lanes), lanes));
  // The input gradient reads up to max_off + dv vectors into a plane.
  l.zs = static_cast<int>(
      RoundUp(size_t(l.front) + size_t(std::max(l.qv, l.dv)) * lanes + lanes, lanes));
  l.group = std::max(1, std::min(kMaxGroup, kGroupVectors / std::max(1, l.qv)));
  l.vector_partials = size_t(l.oc) * l.patch * lanes <= kMaxVectorPartials;
  l.p_stride = RoundUp(size_t(l.in_c) * l.ps, 16);
  l.z_stride = RoundUp(size_t(l.oc) * l.zs, 16);
  l.flipped = 0;
  l.shared = RoundUp(size_t(l.in_c) * l.oc * l.kk, 16);
  l.p = 0;
  l.y = l.p + l.p_stride * l.group;
  // y holds the forward's wide outputs, or the backward's output gradients.
  // (+ lanes: CopyWhole may read a vector past the last wide row.)
  l.dp = l.y + std::max(RoundUp(size_t(l.oc) * l.qv * lanes + lanes, 16), l.z_stride * l.group);
  l.dw = l.dp + RoundUp(size_t(l.in_c) * l.dv * lanes, 16);
  l.db = l.dw + RoundUp(size_t(l.oc) * l.patch * (l.vector_partials ? lanes : 1), 16);
  l.per_chunk = l.db + RoundUp(size_t(l.oc), 16);
  return l;
}

// out[o][j*L..] = bias[o] + sum over channels c and taps (ky, kx) of
// w[o * w_stride + c * k*k + ky * k + kx] * in[c * plane + ky * wp + kx + j*L..]
// for OB outputs and VB vectors of positions; bias may be null.
struct FwdArgs {
  const float* in;
  int channels, plane, k, wp;
  const float* w;
  int w_stride;
  const float* bias;
  float* out;
  int out_stride;
};

template <int OB, int VB>
void FwdBlock(const FwdArgs& a) {
  Vec acc[OB][VB];
#pragma GCC unroll 8
  for (int o = 0; o < OB; ++o) {
#pragma GCC unroll 4
    for (int j = 0; j < VB; ++j) acc[o][j] = simd::Splat(a.bias ? a.bias[o] : 0.0f);
  }
  const int kk = a.k * a.k;
  for (int c = 0; c < a.channels; ++c) {
    for (int ky = 0; ky < a.k; ++ky) {
      const float* row = a.in + static_cast<size_t>(c) * a.plane + ky * a.wp;
      const float* wrow = a.w + c * kk + ky * a.k;
      for (int kx = 0; kx < a.k; ++kx) {
        Vec x[VB];
#pragma GCC unroll 4
        for (int j = 0; j < VB; ++j) x[j] = simd::Load(row + kx + j * kLanes);
#pragma GCC unroll 8
        for (int o = 0; o < OB; ++o) {
          const Vec wv = simd::Splat(wrow[o * a.w_stride + kx]);
#pragma GCC unroll 4
          for (int j = 0; j < VB; ++j) acc[o][j] += x[j] * wv;
        }
      }
    }
  }
#pragma GCC unroll 8
  for (int o = 0; o < OB; ++o) {
#pragma GCC unroll 4
    for (int j = 0; j < VB; ++j) simd::Store(a.out + o * a.out_stride + j * kLanes, acc[o][j]);
  }
}

// FwdBlock for a 1x1 kernel, a plain GEMM: out[o][j*L..] = sum over c of
// w[o * w_stride + c] * in[c * plane + j*L..]. A separate kernel because the
// general one would run its tap loops once per channel.
template <int OB, int VB>
void PointBlock(const FwdArgs& a) {
  Vec acc[OB][VB];
#pragma GCC unroll 8
  for (int o = 0; o < OB; ++o) {
#pragma GCC unroll 4
    for (int j = 0; j < VB; ++j) acc[o][j] = simd::Splat(a.bias ? a.bias[o] : 0.0f);
  }
  const float* row = a.in;
  for (int c = 0; c < a.channels; ++c, row += a.plane) {
    Vec x[VB];
#pragma GCC unroll 4
    for (int j = 0; j < VB; ++j) x[j] = simd::Load(row + j * kLanes);
#pragma GCC unroll 8
    for (int o = 0; o < OB; ++o) {
      const Vec wv = simd::Splat(a.w[o * a.w_stride + c]);
#pragma GCC unroll 4
      for (int j = 0; j < VB; ++j) acc[o][j] += x[j] * wv;
    }
  }
#pragma GCC unroll 8
  for (int o = 0; o < OB; ++o) {
#pragma GCC unroll 4
    for (int j = 0; j < VB; ++j) simd::Store(a.out + o * a.out_stride + j * kLanes, acc[o][j]);
  }
}

// dw[o][t] += sum over samples s < samples and vectors v < n of
// dy[s * dy_sample + o * dy_stride + v*L..] * taps[t][s * tap_sample + v*L..],
// for OB outputs and TB taps. dw holds rows of dw_stride floats with, per
// (o, t), one vector of partial sums, or (when !vector) one float.
struct DwArgs {
  const float* dy;
  int dy_stride;
  size_t dy_sample;
  const float* const* taps;
  size_t tap_sample;
  int samples, n;
  float* dw;
  int dw_stride;
  bool vector;
};

template <int OB, int TB>
void DwBlock(const DwArgs& a) {
  Vec acc[OB][TB];
#pragma GCC unroll 4
  for (int o = 0; o < OB; ++o) {
#pragma GCC unroll 6
    for (int t = 0; t < TB; ++t) acc[o][t] = Vec{};
  }
  for (int s = 0; s < a.samples; ++s) {
    const float* dy = a.dy + s * a.dy_sample;
    const float* tap[TB];
#pragma GCC unroll 6
    for (int t = 0; t < TB; ++t) tap[t] = a.taps[t] + s * a.tap_sample;
    for (int v = 0; v < a.n; ++v) {
      Vec d[OB];
#pragma GCC unroll 4
      for (int o = 0; o < OB; ++o) d[o] = simd::Load(dy + o * a.dy_stride + v * kLanes);
#pragma GCC unroll 6
      for (int t = 0; t < TB; ++t) {
        Vec x = simd::Load(tap[t] + v * kLanes);
        simd::KeepInRegister(x);
#pragma GCC unroll 4
        for (int o = 0; o < OB; ++o) acc[o][t] += d[o] * x;
      }
    }
  }
  if (a.vector) {
#pragma GCC unroll 4
    for (int o = 0; o < OB; ++o) {
#pragma GCC unroll 6
      for (int t = 0; t < TB; ++t) {
        float* p = a.dw + o * a.dw_stride + t * kLanes;
        simd::Store(p, simd::Load(p) + acc[o][t]);
      }
    }
  } else {
    for (int o = 0; o < OB; ++o) {
      for (int t = 0; t < TB; ++t) a.dw[o * a.dw_stride + t] += simd::ReduceAdd(acc[o][t]);
    }
  }
}

using FwdFn = void (*)(const FwdArgs&);
using DwFn = void (*)(const DwArgs&);

template <int... I>
constexpr std::array<FwdFn, sizeof...(I)> MakeFwdTable(std::integer_sequence<int, I...>) {
  return {&FwdBlock<I / kFwdMaxVectors + 1, I % kFwdMaxVectors + 1>...};
}
template <int... I>
constexpr std::array<FwdFn, sizeof...(I)> MakePointTable(std::integer_sequence<int, I...>) {
  return {&PointBlock<I / kFwdMaxVectors + 1, I % kFwdMaxVectors + 1>...};
}
template <int... I>
constexpr std::array<DwFn, sizeof...(I)> MakeDwTable(std::integer_sequence<int, I...>) {
  return {&DwBlock<I / kDwMaxTaps + 1, I % kDwMaxTaps + 1>...};
}
constexpr auto kFwdTable =
    MakeFwdTable(std::make_integer_sequence<int, kFwdMaxOutputs * kFwdMaxVectors>{});
constexpr auto kPointTable =
    MakePointTable(std::make_integer_sequence<int, kFwdMaxOutputs * kFwdMaxVectors>{});
constexpr auto kDwTable =
    MakeDwTable(std::make_integer_sequence<int, kDwMaxOutputs * kDwMaxTaps>{});

// Runs the forward kernel over `outputs` x `vectors`, block by block.
void WideConv(const float* in, int channels, int plane, int k, int wp, const float* w, int w_stride,
              const float* bias, int outputs, int vectors, float* out, int out_stride) {
  for (int o0 = 0; o0 < outputs; o0 += kFwdMaxOutputs) {
    const int ob = std::min(kFwdMaxOutputs, outputs - o0);
    const int vb_max = std::min(kFwdMaxVectors, std::max(1, kFwdMaxAcc / ob));
    for (int v0 = 0; v0 < vectors; v0 += vb_max) {
      const int vb = std::min(vb_max, vectors - v0);
      const FwdArgs a{in + v0 * kLanes,
                      channels,
                      plane,
                      k,
                      wp,
                      w + static_cast<size_t>(o0) * w_stride,
                      w_stride,
                      bias ? bias + o0 : nullptr,
                      out + static_cast<size_t>(o0) * out_stride + v0 * kLanes,
                      out_stride};
      (k == 1 ? kPointTable : kFwdTable)[(ob - 1) * kFwdMaxVectors + (vb - 1)](a);
    }
  }
}

// Copies one sample into the interior of its padded planes. The borders stay
// zero from the start of the call: the copies' zero tails land only on
// borders and on rows that are copied afterwards.
void PadInput(const Plan& l, const float* in, float* p) {
  for (int c = 0; c < l.in_c; ++c) {
    for (int iy = 0; iy < l.in_h; ++iy) {
      simd::CopyRowZeroTail(p + static_cast<size_t>(c) * l.ps + (iy + l.pad) * l.wp + l.pad,
                            in + (static_cast<size_t>(c) * l.in_h + iy) * l.in_w, l.in_w);
    }
  }
}

}  // namespace

bool DirectConvHandles(const ConvGeometry& g) {
  return g.stride == 1 && g.kernel >= 1 && g.out_h() >= 1 && g.out_w() >= 1;
}

bool DirectConvFasterForward(const ConvGeometry& g) { return DirectConvHandles(g); }

bool DirectConvFasterBackward(const ConvGeometry& g) {
  if (!DirectConvHandles(g)) return false;
  const Plan l = MakePlan(g);
  return l.vector_partials || l.qv >= kMinVectorsScalarPartials;
}

size_t DirectConvWorkspaceFloats(const ConvGeometry& g, int threads) {
  const Plan l = MakePlan(g);
  return l.shared + l.per_chunk * static_cast<size_t>(std::max(1, threads));
}

void DirectConvForward(ThreadPool& pool, const ConvGeometry& g, const float* in,
                       const float* weight, const float* bias, float* out, float* workspace) {
  const Plan l = MakePlan(g);
  const int qvl = l.qv * kLanes;
  const size_t in_size = g.in_size(), out_size = g.out_size();
  pool.ParallelFor(g.batch, [&](int64_t begin, int64_t end, int chunk) {
    float* ws = workspace + l.shared + l.per_chunk * chunk;
    float* p = ws + l.p;
    float* y = ws + l.y;
    std::fill(p, p + l.p_stride, 0.0f);
    for (int64_t n = begin; n < end; ++n) {
      PadInput(l, in + n * in_size, p);
      WideConv(p, l.in_c, l.ps, l.k, l.wp, weight, l.patch, bias, l.oc, l.qv, y, qvl);
      // Drop the thrown-away columns. Rows are copied as whole vectors, whose
      // overrun lands on later rows of this sample, copied afterwards, except
      // where it would reach past the sample (another thread's, maybe).
      float* o = out + n * out_size;
      const size_t whole = RoundUp(l.ow, kLanes);
      for (int c = 0; c < l.oc; ++c) {
        for (int oy = 0; oy < l.oh; ++oy) {
          const float* src = y + static_cast<size_t>(c) * qvl + oy * l.wp;
          const size_t at = (static_cast<size_t>(c) * l.oh + oy) * l.ow;
          if (at + whole <= out_size) {
            simd::CopyWhole(o + at, src, l.ow);
          } else {
            simd::CopyShort(o + at, src, l.ow);
          }
        }
      }
    }
  });
}

void DirectConvBackward(ThreadPool& pool, const ConvGeometry& g, const float* in,
                        const float* weight, const float* d_out, float* d_in, float* d_weight,
                        float* d_bias, float* workspace) {
  const Plan l = MakePlan(g);
  const int dvl = l.dv * kLanes;
  const size_t partial = l.vector_partials ? kLanes : 1;
  if (g.batch <= 0) {
    if (d_weight) std::fill(d_weight, d_weight + g.weight_count(), 0.0f);
    if (d_bias) std::fill(d_bias, d_bias + l.oc, 0.0f);
    return;
  }
  float* flipped = workspace + l.flipped;
  if (d_in) {
    // d_in is the forward kernel run on the zero-extended output gradient
    // with flipped[c][o][ky][kx] = weight[o][c][k-1-ky][k-1-kx].
    for (int o = 0; o < l.oc; ++o) {
      for (int c = 0; c < l.in_c; ++c) {
        const float* src = weight + (static_cast<size_t>(o) * l.in_c + c) * l.kk;
        float* dst = flipped + (static_cast<size_t>(c) * l.oc + o) * l.kk;
        for (int t = 0; t < l.kk; ++t) dst[t] = src[l.kk - 1 - t];
      }
    }
  }
  const int chunks = pool.ParallelFor(g.batch, [&](int64_t begin, int64_t end, int chunk) {
    float* ws = workspace + l.shared + l.per_chunk * chunk;
    float* p = ws + l.p;
    float* z = ws + l.y;
    float* dp = ws + l.dp;
    float* dw = ws + l.dw;
    float* db = ws + l.db;
    // Borders, gaps and tails of the padded planes stay zero for the whole
    // call; only interiors are rewritten per sample.
    std::fill(p, dp, 0.0f);
    std::fill(dw, ws + l.per_chunk, 0.0f);
    const float* tap_ptr[kDwMaxTaps];
    for (int64_t n0 = begin; n0 < end; n0 += l.group) {
      const int count = static_cast<int>(std::min<int64_t>(l.group, end - n0));
      for (int i = 0; i < count; ++i) {
        const int64_t n = n0 + i;
        if (d_weight) PadInput(l, in + n * g.in_size(), p + i * l.p_stride);
        // The output gradient in the wide layout; its thrown-away columns
        // stay zero, so they add nothing to any gradient.
        const float* dy = d_out + n * g.out_size();
        float* zi = z + i * l.z_stride + l.front;
        for (int o = 0; o < l.oc; ++o) {
          for (int oy = 0; oy < l.oh; ++oy) {
            simd::CopyRowZeroTail(zi + static_cast<size_t>(o) * l.zs + oy * l.wp,
                                  dy + (static_cast<size_t>(o) * l.oh + oy) * l.ow, l.ow);
          }
          db[o] += simd::Sum(dy + static_cast<size_t>(o) * l.oh * l.ow, l.oh * l.ow);
        }
      }
      for (int o0 = 0; d_weight && o0 < l.oc; o0 += kDwMaxOutputs) {
        const int ob = std::min(kDwMaxOutputs, l.oc - o0);
        int c = 0, ky = 0, kx = 0;  // of the next tap; stepped, not divided out
        for (int t0 = 0; t0 < l.patch; t0 += kDwMaxTaps) {
          const int tb = std::min(kDwMaxTaps, l.patch - t0);
          for (int t = 0; t < tb; ++t) {
            tap_ptr[t] = p + static_cast<size_t>(c) * l.ps + ky * l.wp + kx;
            if (++kx == l.k) {
              kx = 0;
              if (++ky == l.k) {
                ky = 0;
                ++c;
              }
            }
          }
          const DwArgs a{z + static_cast<size_t>(o0) * l.zs + l.front,
                         l.zs,
                         l.z_stride,
                         tap_ptr,
                         l.p_stride,
                         count,
                         l.qv,
                         dw + (static_cast<size_t>(o0) * l.patch + t0) * partial,
                         static_cast<int>(l.patch * partial),
                         l.vector_partials};
          kDwTable[(ob - 1) * kDwMaxTaps + (tb - 1)](a);
        }
      }
      if (!d_in) continue;
      for (int i = 0; i < count; ++i) {
        WideConv(z + i * l.z_stride + (l.front - l.max_off), l.oc, l.zs, l.k, l.wp, flipped,
                 l.oc * l.kk, nullptr, l.in_c, l.dv, dp, dvl);
        float* dx = d_in + (n0 + i) * g.in_size();
        for (int c = 0; c < l.in_c; ++c) {
          for (int iy = 0; iy < l.in_h; ++iy) {
            simd::CopyShort(dx + (static_cast<size_t>(c) * l.in_h + iy) * l.in_w,
                            dp + static_cast<size_t>(c) * dvl + (iy + l.pad) * l.wp + l.pad,
                            l.in_w);
          }
        }
      }
    }
  });
  // Reduce the per-chunk partial sums in chunk order.
  const float* ws0 = workspace + l.shared;
  for (int i = 0; d_weight && i < g.weight_count(); ++i) {
    if (l.vector_partials) {
      Vec s = simd::Load(ws0 + l.dw + i * partial);
      for (int c = 1; c < chunks; ++c) s += simd::Load(ws0 + l.per_chunk * c + l.dw + i * partial);
      d_weight[i] = simd::ReduceAdd(s);
    } else {
      float s = ws0[l.dw + i];
      for (int c = 1; c < chunks; ++c) s += ws0[l.per_chunk * c + l.dw + i];
      d_weight[i] = s;
    }
  }
  if (d_bias) {
    for (int o = 0; o < l.oc; ++o) {
      float s = ws0[l.db + o];
      for (int c = 1; c < chunks; ++c) s += ws0[l.per_chunk * c + l.db + o];
      d_bias[o] = s;
    }
  }
}

}  // namespace mt::kernels
