// Vector shuffles for depthwise convolution: the stride-2 split of a row
// into its column phases, and the transpose between kLanes channel planes
// (NCHW) and a "channel tile" whose pixel p holds those channels' values in
// one vector (NHWC within the tile). __builtin_shufflevector takes constant
// lanes and is in both GCC (12 on) and Clang, so this is one source for
// AVX-512, AVX2 and NEON.
#pragma once

#include <cstddef>
#include <utility>

#include "kernels/cpu/simd.h"

namespace mt::kernels::channel_tile {

using simd::kLanes;
using simd::Vec;

template <size_t... I>
inline Vec Evens(Vec a, Vec b, std::index_sequence<I...>) {
  return __builtin_shufflevector(a, b, static_cast<int>(2 * I)...);
}
template <size_t... I>
inline Vec Odds(Vec a, Vec b, std::index_sequence<I...>) {
  return __builtin_shufflevector(a, b, static_cast<int>(2 * I + 1)...);
}
// Lanes first, L + first, first + 1, L + first + 1, ... of (a, b): the
// interleave of the low (first 0) or high (first L / 2) halves.
template <int kFirst, size_t... I>
inline Vec Interleave(Vec a, Vec b, std::index_sequence<I...>) {
  return __builtin_shufflevector(a, b, static_cast<int>(kFirst + I / 2 + (I % 2 ? kLanes : 0))...);
}
inline constexpr auto kLaneSeq = std::make_index_sequence<kLanes>{};

// Transposes the kLanes x kLanes matrix whose rows are r: log2(kLanes)
// rounds of interleaving row i with row i + L/2 (a perfect shuffle each).
inline void Transpose(Vec* r) {
  for (int round = 1; round < kLanes; round *= 2) {
    Vec t[kLanes];
#pragma GCC unroll 16
    for (int i = 0; i < kLanes / 2; ++i) {
      t[2 * i] = Interleave<0>(r[i], r[i + kLanes / 2], kLaneSeq);
      t[2 * i + 1] = Interleave<kLanes / 2>(r[i], r[i + kLanes / 2], kLaneSeq);
    }
#pragma GCC unroll 16
    for (int i = 0; i < kLanes; ++i) r[i] = t[i];
  }
}

// Where pixel p of a w-wide plane goes in a tile whose rows are row_stride
// pixels apart: walks the plane in order without a division per pixel.
struct TileCursor {
  float* row;
  int x, w, row_stride;
  float* At() const { return row + size_t(x) * kLanes; }
  void Next() {
    if (++x == w) {
      x = 0;
      row += size_t(row_stride) * kLanes;
    }
  }
};

// Tile pixel p (placed by the cursor) = lane i: planes[i * lane_stride + p]
// for the `valid` first lanes, zero in the others, for the n pixels of the
// planes (n = h * w).
inline void PlanesToTile(const float* planes, size_t lane_stride, int valid, int n,
                         TileCursor dst) {
  int p = 0;
  for (; p + kLanes <= n; p += kLanes) {
    Vec r[kLanes];
    for (int i = 0; i < kLanes; ++i)
      r[i] = i < valid ? simd::Load(planes + i * lane_stride + p) : Vec{};
    Transpose(r);
    for (int i = 0; i < kLanes; ++i, dst.Next()) simd::Store(dst.At(), r[i]);
  }
  for (; p < n; ++p, dst.Next()) {
    float v[kLanes] = {};
    for (int i = 0; i < valid; ++i) v[i] = planes[i * lane_stride + p];
    simd::Store(dst.At(), simd::Load(v));
  }
}

// The inverse of PlanesToTile for the `valid` first lanes.
inline void TileToPlanes(TileCursor src, int n, int valid, size_t lane_stride, float* planes) {
  int p = 0;
  for (; p + kLanes <= n; p += kLanes) {
    Vec r[kLanes];
    for (int i = 0; i < kLanes; ++i, src.Next()) r[i] = simd::Load(src.At());
    Transpose(r);
    for (int i = 0; i < valid; ++i) simd::Store(planes + i * lane_stride + p, r[i]);
  }
  for (; p < n; ++p, src.Next()) {
    float v[kLanes];
    simd::Store(v, simd::Load(src.At()));
    for (int i = 0; i < valid; ++i) planes[i * lane_stride + p] = v[i];
  }
}

}  // namespace mt::kernels::channel_tile
