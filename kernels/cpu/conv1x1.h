// Dense pointwise (1x1, stride 1, unpadded) convolution as register blocks
// straight on the NCHW tensors: vectors run along positions, broadcasts
// along channels. A block's vectors may come from different samples, so 4x4
// planes fill the registers as well as 32x32 ones, with no im2col copy, no
// staging of samples side by side and no transpose.
//
// Forward and input gradient are the same block (rows of W, or of W
// transposed, times position vectors). The weight gradient keeps an output x
// input channel block of vector partial sums over position tiles; each
// thread owns a range of output channels, so the sums run in the same order
// for every thread count.
//
// Workspace: one vector of partial sums per weight and per bias.
#pragma once

#include <cstddef>

#include "kernels/geometry.h"

namespace mt::kernels {

class ThreadPool;

// Ungrouped 1x1 kernels, stride 1, no padding, planes of whole vectors.
bool Conv1x1Handles(const ConvGeometry& g);

size_t Conv1x1WorkspaceFloats(const ConvGeometry& g, int threads);

void Conv1x1Forward(ThreadPool& pool, const ConvGeometry& g, const float* in, const float* weight,
                    const float* bias, float* out, float* workspace);

// Same contract as GemmConvBackward in gemm_conv.h.
void Conv1x1Backward(ThreadPool& pool, const ConvGeometry& g, const float* in, const float* weight,
                     const float* d_out, float* d_in, float* d_weight, float* d_bias,
                     float* workspace);

}  // namespace mt::kernels
