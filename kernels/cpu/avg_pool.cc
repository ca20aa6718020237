#include "kernels/cpu/avg_pool.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kernels/cpu/simd.h"
#include "kernels/cpu/thread_pool.h"

namespace mt::kernels {
namespace {

// Planes are only worth splitting over the pool past this many inputs.
constexpr int64_t kParallelInputs = 1 << 16;

// fn(begin, end) over planes [0, planes), on the pool when `inputs` is large.
template <class Fn>
void ForPlanes(ThreadPool& pool, int64_t planes, int64_t inputs, Fn&& fn) {
  if (inputs < kParallelInputs || pool.size() == 1) {
    fn(int64_t{0}, planes);
    return;
  }
  pool.ParallelFor(planes, [&](int64_t b, int64_t e, int) { fn(b, e); });
}

}  // namespace

void AvgPoolForward(ThreadPool& pool, const PoolGeometry& g, const float* in, float* out) {
  const int oh = g.out_h(), ow = g.out_w(), s = g.stride, w = g.in_w, k = g.size;
  const size_t plane_in = static_cast<size_t>(g.in_h) * w;
  const size_t plane_out = static_cast<size_t>(oh) * ow;
  const int64_t planes = int64_t{g.batch} * g.channels;
  // The same float reciprocal as the OpenCL kernel, summed in the same
  // (row-major window) order: both backends give the same bits.
  const float inv_area = 1.0f / static_cast<float>(k * k);
  ForPlanes(pool, planes, planes * static_cast<int64_t>(plane_in), [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const float* src = in + p * plane_in;
      float* dst = out + p * plane_out;
      for (int oy = 0; oy < oh; ++oy) {
        for (int ox = 0; ox < ow; ++ox) {
          float sum = 0.0f;
          for (int ky = 0; ky < k; ++ky) {
            const float* row = src + static_cast<size_t>(oy * s + ky) * w + ox * s;
            for (int kx = 0; kx < k; ++kx) sum += row[kx];
          }
          dst[oy * ow + ox] = sum * inv_area;
        }
      }
    }
  });
}

void AvgPoolBackward(ThreadPool& pool, const PoolGeometry& g, const float* d_out, float* d_in) {
  const int oh = g.out_h(), ow = g.out_w(), s = g.stride, w = g.in_w, k = g.size;
  const size_t plane_in = static_cast<size_t>(g.in_h) * w;
  const size_t plane_out = static_cast<size_t>(oh) * ow;
  const int64_t planes = int64_t{g.batch} * g.channels;
  const float inv_area = 1.0f / static_cast<float>(k * k);
  ForPlanes(pool, planes, planes * static_cast<int64_t>(plane_in), [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      float* dst = d_in + p * plane_in;
      const float* dy = d_out + p * plane_out;
      // Windows that tile the plane write every input once; otherwise zero
      // first (inputs no window covers) and accumulate (overlaps).
      const bool tiles = s == k && oh * k == g.in_h && ow * k == w;
      if (!tiles) std::fill(dst, dst + plane_in, 0.0f);
      for (int oy = 0; oy < oh; ++oy) {
        for (int ox = 0; ox < ow; ++ox) {
          const float v = dy[oy * ow + ox] * inv_area;
          for (int ky = 0; ky < k; ++ky) {
            float* row = dst + static_cast<size_t>(oy * s + ky) * w + ox * s;
            if (tiles) {
              for (int kx = 0; kx < k; ++kx) row[kx] = v;
            } else {
              for (int kx = 0; kx < k; ++kx) row[kx] += v;
            }
          }
        }
      }
    }
  });
}

void GlobalAvgPoolForward(ThreadPool& pool, const float* in, float* out, int planes, int inner) {
  const float inv = 1.0f / static_cast<float>(inner);
  ForPlanes(pool, planes, int64_t{planes} * inner, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) out[p] = simd::Sum(in + p * inner, inner) * inv;
  });
}

void GlobalAvgPoolBackward(ThreadPool& pool, const float* d_out, float* d_in, int planes,
                           int inner) {
  const float inv = 1.0f / static_cast<float>(inner);
  ForPlanes(pool, planes, int64_t{planes} * inner, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      float* dst = d_in + p * inner;
      std::fill(dst, dst + inner, d_out[p] * inv);
    }
  });
}

}  // namespace mt::kernels
