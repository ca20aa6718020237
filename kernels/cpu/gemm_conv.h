// im2col + GEMM convolution on host memory, split over the pool by samples:
// the general path, for any stride and size.
#pragma once

#include <cstddef>

#include "kernels/geometry.h"

namespace mt::kernels {

class ThreadPool;

// Floats of workspace GemmConvForward and GemmConvBackward need on a pool of
// `threads`: per chunk, a column matrix, a staging copy of the outputs,
// partial weight and bias gradients and GEMM packing space.
size_t GemmConvWorkspaceFloats(const ConvGeometry& g, int threads);

// out = conv(in, weight) + bias (bias may be null).
void GemmConvForward(ThreadPool& pool, const ConvGeometry& g, const float* in, const float* weight,
                     const float* bias, float* out, float* workspace);

// Overwrites d_weight and d_bias (each unless null; a null d_weight needs a
// null d_bias) with gradients summed over the batch, and d_in unless it is
// null. Partial sums are reduced in chunk order, so the result is the same on
// every run with the same thread count.
void GemmConvBackward(ThreadPool& pool, const ConvGeometry& g, const float* in, const float* weight,
                      const float* d_out, float* d_in, float* d_weight, float* d_bias,
                      float* workspace);

}  // namespace mt::kernels
