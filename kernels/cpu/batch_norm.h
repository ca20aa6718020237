// Batch normalisation on host memory, x shaped [batch][channels][inner].
// Work is split over channels, and each channel's sums run in one fixed
// order on one thread, so the results do not depend on the thread count.
//
// Statistics are sums of x - k (k: the channel's first value, a cheap guess
// at its mean, so the sum of squares does not cancel catastrophically when
// the mean is large against the spread), accumulated in float vectors over
// short blocks and in double across blocks: one pass for the statistics and
// one to write the output, with float-vector speed and none of the drift of a
// float sum over 10^5 values.
#pragma once

#include "kernels/geometry.h"

namespace mt::kernels {

class ThreadPool;

void BatchNormForwardTraining(ThreadPool& pool, const BatchNormGeometry& g, const float* x,
                              const float* scale, const float* shift, float* running_mean,
                              float* running_var, float* save_mean, float* save_invstd, float* y);

void BatchNormForwardInference(ThreadPool& pool, const BatchNormGeometry& g, const float* x,
                               const float* scale, const float* shift, const float* running_mean,
                               const float* running_var, float* save_invstd, float* y);

// d_x, d_scale and d_shift may each be null (not wanted).
void BatchNormBackward(ThreadPool& pool, const BatchNormGeometry& g, const float* x,
                       const float* d_y, const float* scale, const float* save_mean,
                       const float* save_invstd, bool batch_stats, float* d_x, float* d_scale,
                       float* d_shift);

}  // namespace mt::kernels
