#include "kernels/cpu/direct_conv.h"

#include <algorithm>
#include <array>
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
constexpr int kDwMaxTaps = kManyRegisters ? 5 : 4;     // taps per block
constexpr int kGatherMaxVectors = 8;
// Samples per weight-gradient kernel call: the accumulators stay in registers
// across them, and small layers give one sample only a few vectors of work.
constexpr int kGroup = 4;

// Past this many floats of padded input per sample, re-reading every plane
// for each register block spills out of L2 and im2col + GEMM wins.
constexpr size_t kMaxPaddedInput = size_t{1} << 15;

size_t RoundUp(size_t x, size_t to) { return (x + to - 1) / to * to; }

// Sizes of the wide layout and where each chunk's scratch lives.
struct Plan {
  int k, pad, in_c, oc, in_h, in_w;
  int hp, wp, oh, ow;
  int patch, kk;
  int qv;       // vectors covering the oh * wp wide outputs
  int dv;       // vectors covering the hp * wp wide input positions
  int max_off;  // offset of the last tap
  int front;    // zeros before each output-gradient row (max_off rounded up,
                // so the rows themselves start aligned)
  int ps;       // stride of a padded input plane
  int zs;       // stride of a zero-extended output-gradient plane
  int ds;       // stride of a zero-extended column-gradient row
  size_t p_stride;  // floats between the padded inputs of a group's samples
  size_t z_stride;  // floats between the output gradients of a group's samples
  size_t transposed, shared;             // shared: weights as [patch][out_c]
  size_t p, y, dcol, dp, dwv, db, per_chunk;  // offsets inside a chunk's slice
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
  l.zs = static_cast<int>(RoundUp(size_t(l.front) + size_t(l.qv) * lanes + lanes, lanes));
  l.ds = static_cast<int>(RoundUp(size_t(l.front) + size_t(std::max(l.qv, l.dv)) * lanes, lanes));
  l.p_stride = RoundUp(size_t(l.in_c) * l.ps, 16);
  l.z_stride = RoundUp(size_t(l.oc) * l.zs, 16);
  l.transposed = 0;
  l.shared = RoundUp(size_t(l.patch) * l.oc, 16);
  l.p = 0;
  l.y = l.p + l.p_stride * kGroup;
  // y holds the forward's wide outputs, or the backward's output gradients.
  l.dcol = l.y + std::max(RoundUp(size_t(l.oc) * l.qv * lanes, 16), l.z_stride * kGroup);
  l.dp = l.dcol + RoundUp(size_t(l.patch) * l.ds, 16);
  l.dwv = l.dp + RoundUp(size_t(l.in_c) * l.dv * lanes, 16);
  l.db = l.dwv + RoundUp(size_t(l.oc) * l.patch * lanes, 16);
  l.per_chunk = l.db + RoundUp(size_t(l.oc), 16);
  return l;
}

// out[o][j*L..] = sum over channels c and taps (ky, kx) of
// w[o * w_stride + c * k*k + ky * k + kx] * in[c * plane + ky * wp + kx + j*L..]
// for OB outputs and VB vectors of positions.
struct FwdArgs {
  const float* in;
  int channels, plane, k, wp;
  const float* w;
  int w_stride;
  float* out;
  int out_stride;
};

template <int OB, int VB>
void FwdBlock(const FwdArgs& a) {
  Vec acc[OB][VB];
#pragma GCC unroll 8
  for (int o = 0; o < OB; ++o) {
#pragma GCC unroll 4
    for (int j = 0; j < VB; ++j) acc[o][j] = Vec{};
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
    for (int j = 0; j < VB; ++j) acc[o][j] = Vec{};
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

// dwv[o][t] += sum over samples s < samples and vectors v < n of
// dy[s * dy_sample + o * dy_stride + v*L..] * taps[t][s * tap_sample + v*L..],
// for OB outputs and TB taps; dwv holds one vector of partial sums per (o, t),
// rows of dwv_stride floats.
struct DwArgs {
  const float* dy;
  int dy_stride;
  size_t dy_sample;
  const float* const* taps;
  size_t tap_sample;
  int samples, n;
  float* dwv;
  int dwv_stride;
};

template <int OB, int TB>
void DwBlock(const DwArgs& a) {
  Vec acc[OB][TB];
#pragma GCC unroll 4
  for (int o = 0; o < OB; ++o) {
#pragma GCC unroll 5
    for (int t = 0; t < TB; ++t) acc[o][t] = Vec{};
  }
  for (int s = 0; s < a.samples; ++s) {
    const float* dy = a.dy + s * a.dy_sample;
    const float* tap[TB];
#pragma GCC unroll 5
    for (int t = 0; t < TB; ++t) tap[t] = a.taps[t] + s * a.tap_sample;
    for (int v = 0; v < a.n; ++v) {
      Vec d[OB];
#pragma GCC unroll 4
      for (int o = 0; o < OB; ++o) d[o] = simd::Load(dy + o * a.dy_stride + v * kLanes);
#pragma GCC unroll 5
      for (int t = 0; t < TB; ++t) {
        Vec x = simd::Load(tap[t] + v * kLanes);
        simd::KeepInRegister(x);
#pragma GCC unroll 4
        for (int o = 0; o < OB; ++o) acc[o][t] += d[o] * x;
      }
    }
  }
#pragma GCC unroll 4
  for (int o = 0; o < OB; ++o) {
#pragma GCC unroll 5
    for (int t = 0; t < TB; ++t) {
      float* p = a.dwv + o * a.dwv_stride + t * kLanes;
      simd::Store(p, simd::Load(p) + acc[o][t]);
    }
  }
}

// out[j*L..] = sum over taps (ky, kx) of col[(ky * k + kx) * ds - (ky * wp + kx) + j*L..]
// for VB vectors: the col2im of one channel, as a gather so each output
// vector is summed in a register and stored once.
template <int VB>
void GatherBlock(const float* col, int k, int wp, int ds, float* out) {
  Vec acc[VB];
#pragma GCC unroll 8
  for (int j = 0; j < VB; ++j) acc[j] = Vec{};
  for (int ky = 0; ky < k; ++ky) {
    for (int kx = 0; kx < k; ++kx) {
      const float* r = col + static_cast<size_t>(ky * k + kx) * ds - (ky * wp + kx);
#pragma GCC unroll 8
      for (int j = 0; j < VB; ++j) acc[j] += simd::Load(r + j * kLanes);
    }
  }
#pragma GCC unroll 8
  for (int j = 0; j < VB; ++j) simd::Store(out + j * kLanes, acc[j]);
}

using FwdFn = void (*)(const FwdArgs&);
using DwFn = void (*)(const DwArgs&);
using GatherFn = void (*)(const float*, int, int, int, float*);

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
template <int... I>
constexpr std::array<GatherFn, sizeof...(I)> MakeGatherTable(std::integer_sequence<int, I...>) {
  return {&GatherBlock<I + 1>...};
}

constexpr auto kFwdTable =
    MakeFwdTable(std::make_integer_sequence<int, kFwdMaxOutputs * kFwdMaxVectors>{});
constexpr auto kPointTable =
    MakePointTable(std::make_integer_sequence<int, kFwdMaxOutputs * kFwdMaxVectors>{});
constexpr auto kDwTable = MakeDwTable(std::make_integer_sequence<int, kDwMaxOutputs * kDwMaxTaps>{});
constexpr auto kGatherTable = MakeGatherTable(std::make_integer_sequence<int, kGatherMaxVectors>{});

// Runs the forward kernel over `outputs` x `vectors`, block by block.
void WideConv(const float* in, int channels, int plane, int k, int wp, const float* w,
              int w_stride, int outputs, int vectors, float* out, int out_stride) {
  for (int o0 = 0; o0 < outputs; o0 += kFwdMaxOutputs) {
    const int ob = std::min(kFwdMaxOutputs, outputs - o0);
    const int vb_max = std::min(kFwdMaxVectors, std::max(1, kFwdMaxAcc / ob));
    for (int v0 = 0; v0 < vectors; v0 += vb_max) {
      const int vb = std::min(vb_max, vectors - v0);
      const FwdArgs a{in + v0 * kLanes, channels, plane, k, wp,
                      w + static_cast<size_t>(o0) * w_stride, w_stride,
                      out + static_cast<size_t>(o0) * out_stride + v0 * kLanes, out_stride};
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

bool DirectConvApplies(const ConvGeometry& g) {
  if (g.stride != 1 || g.kernel < 1 || g.out_h() < 1 || g.out_w() < 1) return false;
  const size_t padded = size_t(g.in_c) * (g.in_h + 2 * g.pad) * (g.in_w + 2 * g.pad);
  return padded <= kMaxPaddedInput;
}

size_t DirectConvWorkspaceFloats(const ConvGeometry& g, int threads) {
  const Plan l = MakePlan(g);
  return l.shared + l.per_chunk * static_cast<size_t>(std::max(1, threads));
}

void DirectConvForward(ThreadPool& pool, const ConvGeometry& g, const float* in,
                       const float* weight, const float* bias, float* out, float* workspace) {
  const Plan l = MakePlan(g);
  const int qvl = l.qv * kLanes;
  pool.ParallelFor(g.batch, [&](int64_t begin, int64_t end, int chunk) {
    float* ws = workspace + l.shared + l.per_chunk * chunk;
    float* p = ws + l.p;
    float* y = ws + l.y;
    std::fill(p, p + l.p_stride, 0.0f);
    for (int64_t n = begin; n < end; ++n) {
      PadInput(l, in + n * g.in_size(), p);
      WideConv(p, l.in_c, l.ps, l.k, l.wp, weight, l.patch, l.oc, l.qv, y, qvl);
      float* o = out + n * g.out_size();
      for (int c = 0; c < l.oc; ++c) {
        const float b = bias ? bias[c] : 0.0f;
        for (int oy = 0; oy < l.oh; ++oy) {
          const float* src = y + static_cast<size_t>(c) * qvl + oy * l.wp;
          float* dst = o + (static_cast<size_t>(c) * l.oh + oy) * l.ow;
          for (int ox = 0; ox < l.ow; ++ox) dst[ox] = src[ox] + b;
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
  if (g.batch <= 0) {
    std::fill(d_weight, d_weight + g.weight_count(), 0.0f);
    if (d_bias) std::fill(d_bias, d_bias + l.oc, 0.0f);
    return;
  }
  float* transposed = workspace + l.transposed;
  if (d_in) {
    // The column gradient W^T dy reads the weights as [patch][out_c].
    for (int o = 0; o < l.oc; ++o) {
      for (int t = 0; t < l.patch; ++t) transposed[static_cast<size_t>(t) * l.oc + o] = weight[static_cast<size_t>(o) * l.patch + t];
    }
  }
  const int chunks = pool.ParallelFor(g.batch, [&](int64_t begin, int64_t end, int chunk) {
    float* ws = workspace + l.shared + l.per_chunk * chunk;
    float* p = ws + l.p;
    float* z = ws + l.y;
    float* dcol = ws + l.dcol;
    float* dp = ws + l.dp;
    float* dwv = ws + l.dwv;
    float* db = ws + l.db;
    // Borders, gaps and tails of the padded planes stay zero for the whole
    // call; only interiors are rewritten per sample.
    std::fill(p, dp, 0.0f);
    std::fill(dwv, ws + l.per_chunk, 0.0f);
    const float* tap_ptr[kDwMaxTaps];
    for (int64_t n0 = begin; n0 < end; n0 += kGroup) {
      const int count = static_cast<int>(std::min<int64_t>(kGroup, end - n0));
      for (int i = 0; i < count; ++i) {
        const int64_t n = n0 + i;
        PadInput(l, in + n * g.in_size(), p + i * l.p_stride);
        // The output gradient in the wide layout; its thrown-away columns
        // stay zero, so they add nothing to any gradient.
        const float* dy = d_out + n * g.out_size();
        float* zi = z + i * l.z_stride;
        for (int o = 0; o < l.oc; ++o) {
          for (int oy = 0; oy < l.oh; ++oy) {
            simd::CopyRowZeroTail(zi + static_cast<size_t>(o) * l.zs + l.front + oy * l.wp,
                                  dy + (static_cast<size_t>(o) * l.oh + oy) * l.ow, l.ow);
          }
          const float* row = dy + static_cast<size_t>(o) * l.oh * l.ow;
          Vec s{};
          int j = 0;
          for (; j + kLanes <= l.oh * l.ow; j += kLanes) s += simd::Load(row + j);
          float tail = 0.0f;
          for (; j < l.oh * l.ow; ++j) tail += row[j];
          db[o] += simd::ReduceAdd(s) + tail;
        }
      }
      for (int o0 = 0; o0 < l.oc; o0 += kDwMaxOutputs) {
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
                         dwv + (static_cast<size_t>(o0) * l.patch + t0) * kLanes,
                         l.patch * kLanes};
          kDwTable[(ob - 1) * kDwMaxTaps + (tb - 1)](a);
        }
      }
      if (!d_in) continue;
      for (int i = 0; i < count; ++i) {
        // Column gradient dcol[t][q] = sum_o W[o][t] dy[o][q] in the wide
        // layout, then col2im as a gather over each channel's taps.
        WideConv(z + i * l.z_stride + l.front, l.oc, l.zs, 1, l.wp, transposed, l.oc, l.patch,
                 l.qv, dcol + l.front, l.ds);
        for (int c = 0; c < l.in_c; ++c) {
          const float* col = dcol + static_cast<size_t>(c) * l.kk * l.ds + l.front;
          for (int v0 = 0; v0 < l.dv; v0 += kGatherMaxVectors) {
            const int vb = std::min(kGatherMaxVectors, l.dv - v0);
            kGatherTable[vb - 1](col + v0 * kLanes, l.k, l.wp, l.ds,
                                 dp + static_cast<size_t>(c) * dvl + v0 * kLanes);
          }
        }
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
  const size_t lanes = kLanes;
  const float* ws0 = workspace + l.shared;
  for (int i = 0; i < g.weight_count(); ++i) {
    Vec s = simd::Load(ws0 + l.dwv + i * lanes);
    for (int c = 1; c < chunks; ++c) s += simd::Load(ws0 + l.per_chunk * c + l.dwv + i * lanes);
    d_weight[i] = simd::ReduceAdd(s);
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
