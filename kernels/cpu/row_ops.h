// The structural ops on host memory: a per-row scale (squeeze-and-excitation
// channel gates, and same-shaped products).
#pragma once

#include <cstdint>

namespace mt::kernels {

class ThreadPool;

void RowScaleForward(ThreadPool& pool, const float* x, const float* scale, float* out, int rows,
                     int inner);
// d_x or d_scale may be null (not needed).
void RowScaleBackward(ThreadPool& pool, const float* x, const float* scale, const float* d_out,
                      float* d_x, float* d_scale, int rows, int inner);

}  // namespace mt::kernels
