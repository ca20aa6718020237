// Stride-1 convolution computed directly, without an im2col matrix.
//
// Each input plane is copied into a zero-padded plane of width wp = in_w +
// 2 * pad, and outputs are computed in the same "wide" layout: output (y, x)
// sits at y * wp + x, so every kernel tap is one fixed offset and a vector of
// consecutive outputs reads one unaligned vector of the padded plane. The
// columns x >= out_w are computed and thrown away, which costs k - 1 of every
// wp lanes but keeps the inner loops free of edge cases. Small layers such as
// LeNet's (6 or 16 output channels, 25 or 150 taps) make skinny GEMMs that
// Eigen runs at a fraction of peak; here all outputs of a register block are
// accumulated over every tap before being stored once.
//
// The input gradient is the same kernel run on the zero-extended output
// gradient with the flipped, transposed weights; the weight gradient blocks
// (output channel x tap) pairs and reduces over the wide positions.
#pragma once

#include <cstddef>

#include "kernels/geometry.h"

namespace mt::kernels {

class ThreadPool;

// Whether the direct path computes g at all (stride 1).
bool DirectConvHandles(const ConvGeometry& g);
// Whether it is the faster path for g, as measured against im2col + GEMM on
// LeNet and CIFAR-sized layers (forward: always; backward: unless the
// weights are many and the outputs small).
bool DirectConvFasterForward(const ConvGeometry& g);
bool DirectConvFasterBackward(const ConvGeometry& g);

// Workspace for both DirectConvForward and DirectConvBackward.
size_t DirectConvWorkspaceFloats(const ConvGeometry& g, int threads);

void DirectConvForward(ThreadPool& pool, const ConvGeometry& g, const float* in,
                       const float* weight, const float* bias, float* out, float* workspace);

// Same contract as GemmConvBackward in gemm_conv.h.
void DirectConvBackward(ThreadPool& pool, const ConvGeometry& g, const float* in,
                        const float* weight, const float* d_out, float* d_in, float* d_weight,
                        float* d_bias, float* workspace);

}  // namespace mt::kernels
