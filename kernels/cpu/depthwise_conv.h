// Depthwise convolution (groups == in_c; output channel o reads input channel
// o / multiplier only) computed directly on host memory: no im2col, one pass
// over each input plane per output plane, so the layer stays memory-bound
// and cheap next to the pointwise convolutions around it (MobileNet blocks).
//
// Two families of kernels: for 3x3 and 5x5 kernels at stride 1 or 2, the
// channel-tiled ones of depthwise_tiled.h (vectors across channels) compute
// the weight gradient always, and the forward pass and input gradient where
// rows are short (depthwise_conv.cc says how short); the row kernels below
// (vectors along the rows of one plane) do the rest. The rest of this
// comment is theirs.
//
// Each input plane is copied, zero-padded, into stride x stride "phase"
// planes (phase (ry, rx) holds padded pixels (s*y + ry, s*x + rx)), so every
// kernel tap reads one phase at one fixed offset, whatever the stride.
// Outputs are computed in a "wide" layout of the phase width wps: output
// (y, x) sits at y * wps + x, a vector of consecutive outputs reads one
// unaligned vector per tap, and the few columns x >= out_w are computed and
// thrown away (as in direct_conv.h). The input gradient gathers from the
// output gradient laid out the same way with zeros in the thrown-away
// columns; the weight gradient is one dot product per tap over that layout.
//
// Forward splits over (sample, channel) planes; backward over channels, each
// chunk owning its channels' weights, so the gradients are summed over the
// batch in sample order: the same bits on any thread count.
#pragma once

#include <cstddef>

#include "kernels/geometry.h"

namespace mt::kernels {

class ThreadPool;

// Whether these kernels compute g: depthwise, kernel <= 7, stride <= 4.
bool DepthwiseConvHandles(const ConvGeometry& g);

// Workspace for DepthwiseConvForward and DepthwiseConvBackward.
size_t DepthwiseConvWorkspaceFloats(const ConvGeometry& g, int threads);

// out = conv(in, weight) + bias (bias may be null).
void DepthwiseConvForward(ThreadPool& pool, const ConvGeometry& g, const float* in,
                          const float* weight, const float* bias, float* out, float* workspace);

// Overwrites d_weight and d_bias (each unless null) with the gradients summed
// over the batch, and d_in unless it is null.
void DepthwiseConvBackward(ThreadPool& pool, const ConvGeometry& g, const float* in,
                           const float* weight, const float* d_out, float* d_in, float* d_weight,
                           float* d_bias, float* workspace);

}  // namespace mt::kernels
