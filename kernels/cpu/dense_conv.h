// Which kernel runs an ungrouped convolution on the CPU, per direction: the
// pointwise kernel (conv1x1.h) or the channel-vectorised 3x3 kernel where
// they apply, else the direct kernel where it was measured faster, else
// im2col + GEMM.
#pragma once

#include <cstddef>

#include "kernels/geometry.h"

namespace mt::kernels {

class ThreadPool;

// Forward and backward may take different paths, so the workspace covers
// whichever they take.
size_t DenseConvWorkspaceFloats(const ConvGeometry& g, int threads);

void DenseConvForward(ThreadPool& pool, const ConvGeometry& g, const float* in, const float* weight,
                      const float* bias, float* out, float* workspace);

// Same contract as GemmConvBackward in gemm_conv.h.
void DenseConvBackward(ThreadPool& pool, const ConvGeometry& g, const float* in,
                       const float* weight, const float* d_out, float* d_in, float* d_weight,
                       float* d_bias, float* workspace);

}  // namespace mt::kernels
