#include "kernels/cpu/row_ops.h"

#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/thread_pool.h"

namespace mt::kernels {
namespace {

constexpr int64_t kParallelValues = 1 << 16;

// fn(begin, end) over rows, on the pool when there is enough work. Each row
// is one thread's, so sums do not depend on the thread count.
template <class Fn>
void ForRows(ThreadPool& pool, int rows, int64_t per_row, Fn&& fn) {
  if (int64_t{rows} * per_row < kParallelValues || pool.size() == 1) {
    fn(int64_t{0}, int64_t{rows});
    return;
  }
  pool.ParallelFor(rows, [&](int64_t b, int64_t e, int) { fn(b, e); });
}

}  // namespace

void RowScaleForward(ThreadPool& pool, const float* x, const float* scale, float* out, int rows,
                     int inner) {
  ForRows(pool, rows, inner, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const float s = scale[r];
      const float* xr = x + r * inner;
      float* o = out + r * inner;
      for (int i = 0; i < inner; ++i) o[i] = xr[i] * s;
    }
  });
}

void RowScaleBackward(ThreadPool& pool, const float* x, const float* scale, const float* d_out,
                      float* d_x, float* d_scale, int rows, int inner) {
  ForRows(pool, rows, inner, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const float* dy = d_out + r * inner;
      const float* xr = x + r * inner;
      if (d_scale) {
        float sum = 0.0f;
        for (int i = 0; i < inner; ++i) sum += dy[i] * xr[i];
        d_scale[r] = sum;
      }
      if (d_x) {
        const float s = scale[r];
        float* dx = d_x + r * inner;
        for (int i = 0; i < inner; ++i) dx[i] = dy[i] * s;
      }
    }
  });
}

// CpuBackend's methods for these ops (cpu_backend.cc holds the others).

void CpuBackend::RowScaleForward(View x, View scale, View out, int rows, int inner) {
  kernels::RowScaleForward(pool_, Data(x), Data(scale), Data(out), rows, inner);
}

void CpuBackend::RowScaleBackward(View x, View scale, View d_out, View d_x, View d_scale, int rows,
                                  int inner) {
  kernels::RowScaleBackward(pool_, Data(x), Data(scale), Data(d_out),
                            d_x.empty() ? nullptr : Data(d_x),
                            d_scale.empty() ? nullptr : Data(d_scale), rows, inner);
}

}  // namespace mt::kernels
