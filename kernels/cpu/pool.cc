#include "kernels/cpu/pool.h"

#include <algorithm>
#include <cstddef>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "kernels/cpu/thread_pool.h"

namespace mt::kernels {
namespace {

// Planes per parallel chunk are only worth splitting past this many inputs.
constexpr int64_t kParallelInputs = 1 << 16;

// Generic window: the comparisons are data-dependent branches, which is fine
// for the sizes that are not 2.
void ForwardPlane(const PoolGeometry& g, const float* in, float* out, int32_t* argmax) {
  const int oh = g.out_h(), ow = g.out_w(), s = g.stride, w = g.in_w;
  for (int oy = 0; oy < oh; ++oy) {
    for (int ox = 0; ox < ow; ++ox) {
      int best_idx = oy * s * w + ox * s;
      float best = in[best_idx];
      for (int ky = 0; ky < g.size; ++ky) {
        const int row = (oy * s + ky) * w + ox * s;
        for (int kx = 0; kx < g.size; ++kx) {
          const float v = in[row + kx];
          if (v > best) {
            best = v;
            best_idx = row + kx;
          }
        }
      }
      out[oy * ow + ox] = best;
      argmax[oy * ow + ox] = best_idx;
    }
  }
}

// 2x2 windows (LeNet's, and most nets'), one output row: written as selects
// so the compiler emits blends instead of branches, which random activations
// would mispredict about once per window.
void Forward2x2Row(const PoolGeometry& g, int oy, const float* in, float* o, int32_t* a) {
  const int ow = g.out_w(), s = g.stride, w = g.in_w;
  const int base = oy * s * w;
  const float* r0 = in + base;
  const float* r1 = r0 + w;
  for (int ox = 0; ox < ow; ++ox) {
    const int i0 = base + ox * s;
    const float v0 = r0[ox * s], v1 = r0[ox * s + 1];
    const float v2 = r1[ox * s], v3 = r1[ox * s + 1];
    // Strict > keeps the first maximum in row-major order; std::max(m, v)
    // is (m < v) ? v : m, the same rule, and compiles to one maxss.
    int idx = i0 + static_cast<int>(v1 > v0);
    float m = std::max(v0, v1);
    const int t2 = static_cast<int>(v2 > m);
    idx += t2 * (i0 + w - idx);
    m = std::max(m, v2);
    const int t3 = static_cast<int>(v3 > m);
    idx += t3 * (i0 + w + 1 - idx);
    o[ox] = std::max(m, v3);
    a[ox] = idx;
  }
}

#if defined(__AVX512F__)
// 2x2 windows with stride 2 and at most 16 outputs per row: a row pair is
// loaded as vectors and split into even and odd columns with two permutes.
// Stores are whole vectors (masked stores are slow on some cores) when
// `whole`: the caller then guarantees the lanes past the row land on rows it
// writes afterwards.
void Forward2x2Stride2RowAvx512(int ow, int w, int base, const float* in, float* o, int32_t* a,
                                bool whole) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  const int n = 2 * ow;  // inputs per row used by the windows
  const __mmask16 lo = static_cast<__mmask16>(n >= 16 ? 0xffff : (1u << n) - 1u);
  const __mmask16 hi = static_cast<__mmask16>(n <= 16 ? 0 : (1u << (n - 16)) - 1u);
  const float* r0 = in + base;
  const float* r1 = r0 + w;
  const __m512 t_lo = _mm512_maskz_loadu_ps(lo, r0), t_hi = _mm512_maskz_loadu_ps(hi, r0 + 16);
  const __m512 b_lo = _mm512_maskz_loadu_ps(lo, r1), b_hi = _mm512_maskz_loadu_ps(hi, r1 + 16);
  const __m512 v0 = _mm512_permutex2var_ps(t_lo, even, t_hi);
  const __m512 v1 = _mm512_permutex2var_ps(t_lo, odd, t_hi);
  const __m512 v2 = _mm512_permutex2var_ps(b_lo, even, b_hi);
  const __m512 v3 = _mm512_permutex2var_ps(b_lo, odd, b_hi);
  // Index of the window's top-left input: base + 2 * lane.
  __m512i idx = _mm512_add_epi32(_mm512_set1_epi32(base), even);
  const __m512i one = _mm512_set1_epi32(1), down = _mm512_set1_epi32(w);
  __m512 m = v0;
  __mmask16 t = _mm512_cmp_ps_mask(v1, m, _CMP_GT_OQ);  // strict: ties keep the first
  m = _mm512_mask_mov_ps(m, t, v1);
  __m512i best = _mm512_mask_add_epi32(idx, t, idx, one);
  t = _mm512_cmp_ps_mask(v2, m, _CMP_GT_OQ);
  m = _mm512_mask_mov_ps(m, t, v2);
  best = _mm512_mask_add_epi32(best, t, idx, down);
  t = _mm512_cmp_ps_mask(v3, m, _CMP_GT_OQ);
  m = _mm512_mask_mov_ps(m, t, v3);
  best = _mm512_mask_add_epi32(best, t, _mm512_add_epi32(idx, down), one);
  if (whole) {
    _mm512_storeu_ps(o, m);
    _mm512_storeu_si512(a, best);
  } else {
    const __mmask16 out_mask = static_cast<__mmask16>((1u << ow) - 1u);
    _mm512_mask_storeu_ps(o, out_mask, m);
    _mm512_mask_storeu_epi32(a, out_mask, best);
  }
}

// The backward of the above for one output row when the windows tile the
// input (in_w == 2 * ow): each output gradient goes to the one input of its
// window that was the maximum and every other input gets zero, so the two
// input rows are written outright, interleaved back with two permutes.
void Backward2x2Stride2RowAvx512(int ow, int base, const float* dy, const int32_t* idx, float* d_in,
                                 bool whole) {
  const int w = 2 * ow;
  const __mmask16 out_mask = static_cast<__mmask16>((1u << ow) - 1u);
  const __m512 g = _mm512_maskz_loadu_ps(out_mask, dy);
  const __m512i chosen = _mm512_maskz_loadu_epi32(out_mask, idx);
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  // Where in its window each lane's maximum was: 0, 1, w or w + 1.
  const __m512i rel = _mm512_sub_epi32(chosen, _mm512_add_epi32(_mm512_set1_epi32(base), even));
  const __m512 e0 = _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(rel, _mm512_setzero_si512()), g);
  const __m512 e1 = _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(rel, _mm512_set1_epi32(1)), g);
  const __m512 e2 = _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(rel, _mm512_set1_epi32(w)), g);
  const __m512 e3 = _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(rel, _mm512_set1_epi32(w + 1)), g);
  // Lane 2j of the low half takes e[j], lane 2j+1 takes e'[j] (index 16 + j).
  const __m512i inter_lo =
      _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i inter_hi =
      _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  const __m512 top_lo = _mm512_permutex2var_ps(e0, inter_lo, e1);
  const __m512 top_hi = _mm512_permutex2var_ps(e0, inter_hi, e1);
  const __m512 bot_lo = _mm512_permutex2var_ps(e2, inter_lo, e3);
  const __m512 bot_hi = _mm512_permutex2var_ps(e2, inter_hi, e3);
  float* top = d_in + base;
  float* bot = top + w;
  // The top row's overrun lands on the bottom row, stored next; the bottom
  // row's on the next row pair, which the caller writes afterwards if whole.
  if (w <= 16) {
    _mm512_storeu_ps(top, top_lo);
    if (whole) {
      _mm512_storeu_ps(bot, bot_lo);
    } else {
      _mm512_mask_storeu_ps(bot, static_cast<__mmask16>((1u << w) - 1u), bot_lo);
    }
  } else {
    _mm512_storeu_ps(top, top_lo);
    _mm512_storeu_ps(top + 16, top_hi);
    _mm512_storeu_ps(bot, bot_lo);
    if (whole) {
      _mm512_storeu_ps(bot + 16, bot_hi);
    } else {
      _mm512_mask_storeu_ps(bot + 16, static_cast<__mmask16>((1u << (w - 16)) - 1u), bot_hi);
    }
  }
}
#endif

// Planes [begin, end), which one thread writes in order.
void ForwardPlanes(const PoolGeometry& g, const float* in, float* out, int32_t* argmax,
                   int64_t begin, int64_t end) {
  const size_t plane_in = static_cast<size_t>(g.in_h) * g.in_w;
  const int oh = g.out_h(), ow = g.out_w();
  const size_t plane_out = static_cast<size_t>(oh) * ow;
#if defined(__AVX512F__)
  if (g.size == 2 && g.stride == 2 && ow <= 16) {
    const size_t out_end = end * plane_out;  // this thread's outputs end here
    for (int64_t p = begin; p < end; ++p) {
      for (int oy = 0; oy < oh; ++oy) {
        const size_t at = p * plane_out + oy * ow;
        Forward2x2Stride2RowAvx512(ow, g.in_w, 2 * oy * g.in_w, in + p * plane_in, out + at,
                                   argmax + at, at + 16 <= out_end);
      }
    }
    return;
  }
#endif
  for (int64_t p = begin; p < end; ++p) {
    const float* src = in + p * plane_in;
    float* o = out + p * plane_out;
    int32_t* a = argmax + p * plane_out;
    if (g.size == 2) {
      for (int oy = 0; oy < oh; ++oy) Forward2x2Row(g, oy, src, o + oy * ow, a + oy * ow);
    } else {
      ForwardPlane(g, src, o, a);
    }
  }
}

}  // namespace

void MaxPoolForward(ThreadPool& pool, const PoolGeometry& g, const float* in, float* out,
                    int32_t* argmax) {
  const int64_t planes = int64_t{g.batch} * g.channels;
  if (planes * g.in_h * g.in_w < kParallelInputs) {
    ForwardPlanes(g, in, out, argmax, 0, planes);
  } else {
    pool.ParallelFor(planes, [&](int64_t begin, int64_t end, int) {
      ForwardPlanes(g, in, out, argmax, begin, end);
    });
  }
}

void MaxPoolBackward(ThreadPool& pool, const PoolGeometry& g, const float* d_out,
                     const int32_t* argmax, float* d_in) {
  const int64_t planes = int64_t{g.batch} * g.channels;
  const int oh = g.out_h(), ow = g.out_w();
  const size_t plane_in = static_cast<size_t>(g.in_h) * g.in_w;
  const size_t plane_out = static_cast<size_t>(oh) * ow;
  auto body = [&](int64_t begin, int64_t end, int) {
#if defined(__AVX512F__)
    // Below 8 outputs per row the scalar scatter is faster (measured on
    // LeNet's 10x10 -> 5x5).
    if (g.size == 2 && g.stride == 2 && ow >= 8 && ow <= 16 && g.in_w == 2 * ow &&
        g.in_h == 2 * oh) {
      const size_t in_end = end * plane_in;  // this thread's inputs end here
      for (int64_t p = begin; p < end; ++p) {
        for (int oy = 0; oy < oh; ++oy) {
          const int base = 2 * oy * g.in_w;
          const size_t o = p * plane_out + oy * ow;
          Backward2x2Stride2RowAvx512(ow, base, d_out + o, argmax + o, d_in + p * plane_in,
                                      p * plane_in + base + 2 * g.in_w + 16 <= in_end);
        }
      }
      return;
    }
#endif
    for (int64_t p = begin; p < end; ++p) {
      float* dst = d_in + p * plane_in;
      std::fill(dst, dst + plane_in, 0.0f);
      const float* dy = d_out + p * plane_out;
      const int32_t* idx = argmax + p * plane_out;
      for (size_t i = 0; i < plane_out; ++i) dst[idx[i]] += dy[i];
    }
  };
  if (planes * static_cast<int64_t>(plane_in) < kParallelInputs) {
    body(0, planes, 0);
  } else {
    pool.ParallelFor(planes, body);
  }
}

}  // namespace mt::kernels
