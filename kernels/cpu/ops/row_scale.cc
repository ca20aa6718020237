// The row scale on the CPU, a table op (kernels/op_table.h): rows of
// `inner` values, each scaled by one value. A same-shaped product is
// inner 1; a per-channel scale of NCHW (a squeeze-and-excitation gate) is
// rows N * C, inner H * W.
//
//   row_scale_forward(x, scale, out, rows, inner):
//     out[r][i] = x[r][i] * scale[r]
//   row_scale_backward(x, scale, d_out, d_x, d_scale, rows, inner):
//     d_x[r][i] = d_out[r][i] * scale[r]; d_scale[r] = sum_i d_out[r][i] * x[r][i]
//     (each overwritten; an empty view is skipped)
#include <cstdint>

#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/op_table.h"

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

void RowScaleForward(CpuBackend& be, View x_view, View scale_view, View out_view, int rows,
                     int inner) {
  const float* x = CpuBackend::Data(x_view);
  const float* scale = CpuBackend::Data(scale_view);
  float* out = CpuBackend::Data(out_view);
  ForRows(be.pool(), rows, inner, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const float s = scale[r];
      const float* xr = x + r * inner;
      float* o = out + r * inner;
      for (int i = 0; i < inner; ++i) o[i] = xr[i] * s;
    }
  });
}

void RowScaleBackward(CpuBackend& be, View x_view, View scale_view, View d_out_view, View d_x_view,
                      View d_scale_view, int rows, int inner) {
  const float* x = CpuBackend::Data(x_view);
  const float* scale = CpuBackend::Data(scale_view);
  const float* d_out = CpuBackend::Data(d_out_view);
  float* d_x = d_x_view.empty() ? nullptr : CpuBackend::Data(d_x_view);
  float* d_scale = d_scale_view.empty() ? nullptr : CpuBackend::Data(d_scale_view);
  ForRows(be.pool(), rows, inner, [&](int64_t b, int64_t e) {
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

}  // namespace

MT_REGISTER_OP("row_scale_forward", RowScaleForward);
MT_REGISTER_OP("row_scale_backward", RowScaleBackward);

}  // namespace mt::kernels
