// Average pooling (square windows, no padding) and global average pooling
// on host memory, split over (sample, channel) planes. Each plane is one
// thread's, summed in one fixed order, so results do not depend on the
// thread count.
#pragma once

#include "kernels/geometry.h"

namespace mt::kernels {

class ThreadPool;

void AvgPoolForward(ThreadPool& pool, const PoolGeometry& g, const float* in, float* out);
// Overwrites d_in: zero, then each output's gradient / size^2 added over its
// window, outputs in row-major order.
void AvgPoolBackward(ThreadPool& pool, const PoolGeometry& g, const float* d_out, float* d_in);

// out[p] = mean of in[p * inner .. (p + 1) * inner) for p < planes.
void GlobalAvgPoolForward(ThreadPool& pool, const float* in, float* out, int planes, int inner);
// d_in[p * inner + i] = d_out[p] / inner.
void GlobalAvgPoolBackward(ThreadPool& pool, const float* d_out, float* d_in, int planes,
                           int inner);

}  // namespace mt::kernels
