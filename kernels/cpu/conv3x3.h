// Dense 3x3, stride-1 convolution with vectors along channels rather than
// along positions: each register block holds X output positions by OB
// vectors of output channels and, per input channel and tap, loads OB weight
// vectors and broadcasts X inputs. Unlike the wide layout of direct_conv.h,
// no lane computes a thrown-away column, so 8x8 planes run as fast as 32x32
// ones; the price is a transpose of each sample's outputs (and, backward, of
// its output gradient), a few percent of the multiply-adds at 32+ channels.
//
// The input gradient is the same block run on the output gradient, zero
// padded by 2 - pad, with the flipped, transposed weights. The weight
// gradient keeps the 9 taps of one input channel by OB output vectors in
// registers over a whole sample.
//
// Workspace: the packed weights once, and per thread one sample's padded
// planes, staging rows and weight-gradient partials: nothing grows with the
// batch.
#pragma once

#include <cstddef>

#include "kernels/geometry.h"

namespace mt::kernels {

class ThreadPool;

// Ungrouped 3x3 kernels, stride 1, padding at most 2, and output channels
// in whole vectors: forward and weight gradient.
bool Conv3x3Handles(const ConvGeometry& g);
// The input gradient, whose vectors run along the input channels, needs
// those in whole vectors too (an RGB first layer has none to compute).
bool Conv3x3HandlesInputGradient(const ConvGeometry& g);

size_t Conv3x3WorkspaceFloats(const ConvGeometry& g, int threads);

void Conv3x3Forward(ThreadPool& pool, const ConvGeometry& g, const float* in, const float* weight,
                    const float* bias, float* out, float* workspace);

// Same contract as GemmConvBackward in gemm_conv.h; d_in must be null
// unless Conv3x3HandlesInputGradient(g).
void Conv3x3Backward(ThreadPool& pool, const ConvGeometry& g, const float* in, const float* weight,
                     const float* d_out, float* d_in, float* d_weight, float* d_bias,
                     float* workspace);

}  // namespace mt::kernels
