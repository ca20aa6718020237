#include "kernels/cpu/pool.h"

#include <algorithm>
#include <cstddef>

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

// 2x2 windows (LeNet's, and most nets'): written as selects so the compiler
// emits vector blends instead of branches, which random activations would
// mispredict about once per window.
void ForwardPlane2x2(const PoolGeometry& g, const float* in, float* out, int32_t* argmax) {
  const int oh = g.out_h(), ow = g.out_w(), s = g.stride, w = g.in_w;
  for (int oy = 0; oy < oh; ++oy) {
    const int base = oy * s * w;
    const float* r0 = in + base;
    const float* r1 = r0 + w;
    float* o = out + oy * ow;
    int32_t* a = argmax + oy * ow;
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
}

}  // namespace

void MaxPoolForward(ThreadPool& pool, const PoolGeometry& g, const float* in, float* out,
                    int32_t* argmax) {
  const int64_t planes = int64_t{g.batch} * g.channels;
  const size_t plane_in = static_cast<size_t>(g.in_h) * g.in_w;
  const size_t plane_out = static_cast<size_t>(g.out_h()) * g.out_w();
  auto body = [&](int64_t begin, int64_t end, int) {
    for (int64_t p = begin; p < end; ++p) {
      const float* src = in + p * plane_in;
      if (g.size == 2) {
        ForwardPlane2x2(g, src, out + p * plane_out, argmax + p * plane_out);
      } else {
        ForwardPlane(g, src, out + p * plane_out, argmax + p * plane_out);
      }
    }
  };
  if (planes * static_cast<int64_t>(plane_in) < kParallelInputs) {
    body(0, planes, 0);
  } else {
    pool.ParallelFor(planes, body);
  }
}

void MaxPoolBackward(ThreadPool& pool, const PoolGeometry& g, const float* d_out,
                     const int32_t* argmax, float* d_in) {
  const int64_t planes = int64_t{g.batch} * g.channels;
  const size_t plane_in = static_cast<size_t>(g.in_h) * g.in_w;
  const size_t plane_out = static_cast<size_t>(g.out_h()) * g.out_w();
  auto body = [&](int64_t begin, int64_t end, int) {
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
