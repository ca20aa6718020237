// Register blocks of the channel-vectorised 3x3 convolution (conv3x3.h), and
// the transposes between channel-major planes and position-major rows that
// it needs around them. Internal to conv3x3.cc; a header only to keep each
// file small.
#pragma once

#include <array>
#include <cstddef>
#include <utility>

#include "kernels/cpu/simd.h"

namespace mt::kernels::conv3x3 {

using simd::kLanes;
using simd::Vec;

constexpr int kK = 3;
constexpr int kTaps = kK * kK;
constexpr bool kManyRegisters = simd::kRegisters >= 32;
// Accumulators plus the weight vectors and one broadcast per step must fit
// in the register file, or the compiler spills and the block turns
// load-bound.
constexpr int kMaxAcc = kManyRegisters ? 24 : 12;
constexpr int kMaxOutVectors = kManyRegisters ? 4 : 2;   // output vectors per conv block
constexpr int kMaxPositions = kManyRegisters ? 8 : 6;    // positions per conv block
constexpr int kMaxGradVectors = kManyRegisters ? 3 : 1;  // 9 taps x this many accumulators

// out[x * ld_out + v * L..] = init + sum over channels c and taps t of
// w[(c * 9 + t) * ld_w + v * L..] * in[c * plane + (t / 3) * wp + t % 3 + x]
// for X positions and OB output vectors, where init is the bias vectors, or
// zero when bias is null.
struct ConvArgs {
  const float* in;
  int channels;
  size_t plane;
  int wp;
  const float* w;
  int ld_w;
  const float* bias;
  float* out;
  int ld_out;
};

template <int OB, int X>
void ConvBlock(const ConvArgs& a) {
  Vec acc[X][OB];
#pragma GCC unroll 12
  for (int x = 0; x < X; ++x) {
#pragma GCC unroll 4
    for (int v = 0; v < OB; ++v) {
      acc[x][v] = a.bias ? simd::Load(a.bias + v * kLanes) : Vec{};
    }
  }
  const float* src = a.in;
  const float* w = a.w;
  for (int c = 0; c < a.channels; ++c, src += a.plane, w += kTaps * a.ld_w) {
#pragma GCC unroll 3
    for (int ky = 0; ky < kK; ++ky) {
#pragma GCC unroll 3
      for (int kx = 0; kx < kK; ++kx) {
        const float* wt = w + (ky * kK + kx) * a.ld_w;
        const float* s = src + ky * a.wp + kx;
        Vec wv[OB];
#pragma GCC unroll 4
        for (int v = 0; v < OB; ++v) wv[v] = simd::Load(wt + v * kLanes);
#pragma GCC unroll 12
        for (int x = 0; x < X; ++x) {
          // One broadcast per position, shared by the OB multiply-adds
          // (folded into each FMA it would be loaded OB times).
          Vec b = simd::Splat(s[x]);
          simd::KeepInRegister(b);
#pragma GCC unroll 4
          for (int v = 0; v < OB; ++v) acc[x][v] += wv[v] * b;
        }
      }
    }
  }
#pragma GCC unroll 12
  for (int x = 0; x < X; ++x) {
#pragma GCC unroll 4
    for (int v = 0; v < OB; ++v) simd::Store(a.out + x * a.ld_out + v * kLanes, acc[x][v]);
  }
}

// part[t * ld_part + v * L..] += sum over rows y < rows and columns x < cols
// of dy[(y * cols + x) * ld_dy + v * L..] * in[y * wp + (t / 3) * wp + t % 3 + x]
// for the 9 taps t of one input channel and OB output vectors.
struct GradArgs {
  const float* in;
  int wp;
  const float* dy;
  int ld_dy;
  int rows, cols;
  float* part;
  int ld_part;
};

template <int OB>
void GradBlock(const GradArgs& a) {
  Vec acc[kTaps][OB];
#pragma GCC unroll 9
  for (int t = 0; t < kTaps; ++t) {
#pragma GCC unroll 3
    for (int v = 0; v < OB; ++v) acc[t][v] = Vec{};
  }
  const float* dy = a.dy;
  for (int y = 0; y < a.rows; ++y) {
    const float* row = a.in + y * a.wp;
    for (int x = 0; x < a.cols; ++x, dy += a.ld_dy) {
      Vec d[OB];
#pragma GCC unroll 3
      for (int v = 0; v < OB; ++v) d[v] = simd::Load(dy + v * kLanes);
#pragma GCC unroll 3
      for (int ky = 0; ky < kK; ++ky) {
#pragma GCC unroll 3
        for (int kx = 0; kx < kK; ++kx) {
          Vec b = simd::Splat(row[ky * a.wp + kx + x]);
          simd::KeepInRegister(b);
#pragma GCC unroll 3
          for (int v = 0; v < OB; ++v) acc[ky * kK + kx][v] += d[v] * b;
        }
      }
    }
  }
#pragma GCC unroll 9
  for (int t = 0; t < kTaps; ++t) {
#pragma GCC unroll 3
    for (int v = 0; v < OB; ++v) {
      float* p = a.part + t * a.ld_part + v * kLanes;
      simd::Store(p, simd::Load(p) + acc[t][v]);
    }
  }
}

using ConvFn = void (*)(const ConvArgs&);
using GradFn = void (*)(const GradArgs&);

// Only the blocks whose accumulators fit are instantiated.
template <int OB, int X>
constexpr ConvFn ConvEntry() {
  if constexpr (OB * X <= kMaxAcc) {
    return &ConvBlock<OB, X>;
  } else {
    return nullptr;
  }
}
template <int... I>
constexpr std::array<ConvFn, sizeof...(I)> MakeConvTable(std::integer_sequence<int, I...>) {
  return {ConvEntry<I / kMaxPositions + 1, I % kMaxPositions + 1>()...};
}
inline constexpr auto kConvTable =
    MakeConvTable(std::make_integer_sequence<int, kMaxOutVectors * kMaxPositions>{});

template <int... I>
constexpr std::array<GradFn, sizeof...(I)> MakeGradTable(std::integer_sequence<int, I...>) {
  return {&GradBlock<I + 1>...};
}
inline constexpr auto kGradTable =
    MakeGradTable(std::make_integer_sequence<int, kMaxGradVectors>{});

// One stage of an in-register transpose of kLanes rows: for each pair of rows
// (r, r + B) with r & B == 0, lanes j + B of row r trade places with lanes j
// of row r + B (j & B == 0). After the stages B = L/2, ..., 1 the rows hold
// the columns.
template <int B, size_t... J>
inline void TransposeStage(Vec* r, std::index_sequence<J...>) {
  constexpr int L = kLanes;
  for (int i = 0; i < L; ++i) {
    if (i & B) continue;
    const Vec a = r[i], b = r[i + B];
    r[i] = __builtin_shufflevector(a, b, ((J & B) ? int(J - B) + L : int(J))...);
    r[i + B] = __builtin_shufflevector(a, b, ((J & B) ? int(J) + L : int(J + B))...);
  }
}

template <int B>
inline void TransposeStages(Vec* r) {
  if constexpr (B >= 1) {
    TransposeStage<B>(r, std::make_index_sequence<kLanes>{});
    TransposeStages<B / 2>(r);
  }
}

// dst[j * ld_dst + i] = src[i * ld_src + j] for i, j < kLanes.
inline void TransposeTile(const float* src, size_t ld_src, float* dst, size_t ld_dst) {
  Vec r[kLanes];
  for (int i = 0; i < kLanes; ++i) r[i] = simd::Load(src + i * ld_src);
  TransposeStages<kLanes / 2>(r);
  for (int i = 0; i < kLanes; ++i) simd::Store(dst + i * ld_dst, r[i]);
}

// dst[j * ld_dst + i] = src[i * ld_src + j] for i < rows, j < cols: planes
// to rows of positions, and back.
inline void Transpose(const float* src, size_t ld_src, int rows, int cols, float* dst,
                      size_t ld_dst) {
  const int full_rows = rows / kLanes * kLanes, full_cols = cols / kLanes * kLanes;
  for (int j = 0; j < full_cols; j += kLanes) {
    for (int i = 0; i < full_rows; i += kLanes) {
      TransposeTile(src + i * ld_src + j, ld_src, dst + j * ld_dst + i, ld_dst);
    }
  }
  for (int i = 0; i < rows; ++i) {
    for (int j = i < full_rows ? full_cols : 0; j < cols; ++j) {
      dst[j * ld_dst + i] = src[i * ld_src + j];
    }
  }
}

}  // namespace mt::kernels::conv3x3
