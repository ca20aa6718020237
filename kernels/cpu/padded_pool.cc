#include "kernels/cpu/padded_pool.h"

#include <algorithm>
#include <cstddef>
#include <limits>

#include "kernels/cpu/thread_pool.h"

namespace mt::kernels {
namespace {

constexpr int64_t kParallelInputs = 1 << 16;

// The input rows (or columns) [begin, end) of the window starting at
// `o * stride - pad`, clipped to the input.
struct Span {
  int begin, end;
};
Span Clip(int o, int stride, int pad, int size, int extent) {
  const int start = o * stride - pad;
  return {std::max(start, 0), std::min(start + size, extent)};
}

// fn(p, o, y, x) for every output o of every plane p (each plane one
// thread's), with its window clipped to the input rows y and columns x.
template <class Fn>
void ForWindows(ThreadPool& pool, const PoolGeometry& g, Fn&& fn) {
  const int oh = g.out_h(), ow = g.out_w();
  auto planes_fn = [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p)
      for (int oy = 0; oy < oh; ++oy) {
        const Span y = Clip(oy, g.stride, g.pad, g.size, g.in_h);
        for (int ox = 0; ox < ow; ++ox)
          fn(p, (p * oh + oy) * ow + ox, y, Clip(ox, g.stride, g.pad, g.size, g.in_w));
      }
  };
  const int64_t planes = int64_t{g.batch} * g.channels;
  if (planes * g.in_h * g.in_w < kParallelInputs || pool.size() == 1) {
    planes_fn(int64_t{0}, planes);
    return;
  }
  pool.ParallelFor(planes, [&](int64_t b, int64_t e, int) { planes_fn(b, e); });
}

// The divisor of output (oy, ox)'s mean.
float Area(const PoolGeometry& g, Span y, Span x) {
  return g.count_pad ? static_cast<float>(g.size * g.size)
                     : static_cast<float>((y.end - y.begin) * (x.end - x.begin));
}

}  // namespace

void PaddedMaxPoolForward(ThreadPool& pool, const PoolGeometry& g, const float* in, float* out,
                          int32_t* argmax) {
  const int w = g.in_w;
  const size_t plane_in = static_cast<size_t>(g.in_h) * w;
  ForWindows(pool, g, [&](int64_t p, int64_t o, Span y, Span x) {
    const float* src = in + p * plane_in;
    // Strict > from -inf keeps the first maximum in row-major order;
    // pad <= size / 2 leaves every window at least one input.
    float best = -std::numeric_limits<float>::infinity();
    int32_t best_idx = y.begin * w + x.begin;
    for (int iy = y.begin; iy < y.end; ++iy)
      for (int ix = x.begin; ix < x.end; ++ix)
        if (src[iy * w + ix] > best) {
          best = src[iy * w + ix];
          best_idx = iy * w + ix;
        }
    out[o] = best;
    argmax[o] = best_idx;
  });
}

void PaddedAvgPoolForward(ThreadPool& pool, const PoolGeometry& g, const float* in, float* out) {
  const int w = g.in_w;
  const size_t plane_in = static_cast<size_t>(g.in_h) * w;
  ForWindows(pool, g, [&](int64_t p, int64_t o, Span y, Span x) {
    const float* src = in + p * plane_in;
    float sum = 0.0f;
    for (int iy = y.begin; iy < y.end; ++iy)
      for (int ix = x.begin; ix < x.end; ++ix) sum += src[iy * w + ix];
    out[o] = sum / Area(g, y, x);
  });
}

// Each plane's inputs are zeroed, then its outputs add into them in order:
// ForWindows hands a plane's outputs to one thread, first to last.
void PaddedAvgPoolBackward(ThreadPool& pool, const PoolGeometry& g, const float* d_out,
                           float* d_in) {
  const int w = g.in_w;
  const size_t plane_in = static_cast<size_t>(g.in_h) * w;
  ForWindows(pool, g, [&](int64_t p, int64_t o, Span y, Span x) {
    float* dst = d_in + p * plane_in;
    if (o % (g.out_h() * g.out_w()) == 0) std::fill(dst, dst + plane_in, 0.0f);
    const float v = d_out[o] / Area(g, y, x);
    for (int iy = y.begin; iy < y.end; ++iy)
      for (int ix = x.begin; ix < x.end; ++ix) dst[iy * w + ix] += v;
  });
}

}  // namespace mt::kernels
