// Grouped convolution (1 < groups, any shape the depthwise kernels do not
// take) as im2col + GEMM per group: each group's input channels of a sample
// are one contiguous slice, unfolded and multiplied by the group's weight
// block into the group's output slice. Split over the pool by samples.
#pragma once

#include <cstddef>

#include "kernels/geometry.h"

namespace mt::kernels {

class ThreadPool;

// Floats of workspace GroupedConvForward and GroupedConvBackward need on a
// pool of `threads`: per chunk, one group's column matrix, partial weight
// and bias gradients and GEMM packing space.
size_t GroupedConvWorkspaceFloats(const ConvGeometry& g, int threads);

// out = conv(in, weight) + bias (bias may be null).
void GroupedConvForward(ThreadPool& pool, const ConvGeometry& g, const float* in,
                        const float* weight, const float* bias, float* out, float* workspace);

// Overwrites d_weight and d_bias (each unless null) with the gradients summed
// over the batch, and d_in unless it is null. Partial sums are reduced in
// chunk order, so the result is the same on every run with the same thread
// count.
void GroupedConvBackward(ThreadPool& pool, const ConvGeometry& g, const float* in,
                         const float* weight, const float* d_out, float* d_in, float* d_weight,
                         float* d_bias, float* workspace);

}  // namespace mt::kernels
