// Depthwise 3x3 and 5x5 convolution, stride 1 or 2, on channel tiles: kLanes
// channels of one sample are transposed (kernels/cpu/channel_tile.h) into a
// zero-bordered tile whose pixel is one vector of those channels, so every
// kernel tap is one vector multiply-add with that tap's kLanes weights held
// in a register, whatever the plane's size. The per-plane kernels of
// depthwise_conv.cc vectorise along a row instead, which on the 8x8 and 4x4
// planes of MobileNet's late blocks leaves most lanes idle and spends its
// time on per-plane set-up.
//
// Forward:      out(y, x)  = sum over taps of w(t) * tile(s*y + ky, s*x + kx).
// Weight grad:  one register accumulator per tap, over a tile's pixels.
// Input grad:   a gather, not a scatter: each input pixel sums the output
//               gradients that read it (the flipped kernel), visiting the
//               stride's s*s pixel phases apart so that each phase's taps are
//               known at compile time; the output gradient tile has a zero
//               border wide enough that no tap needs a bounds check.
//
// Forward splits over (channel tile, sample). Backward splits over (channel
// tile, group of kGroupSamples samples): each unit keeps its own weight
// gradient partials, summed over the groups in order afterwards, so the
// gradients are the same bits on any thread count, and two threads have work
// even when a layer has one channel tile.
#pragma once

#include <cstddef>

#include "kernels/geometry.h"

namespace mt::kernels {

class ThreadPool;

// Whether the tiled kernels compute g: depthwise, kernel 3 or 5, stride 1
// or 2, padding below the kernel size.
bool DepthwiseTiledHandles(const ConvGeometry& g);

size_t DepthwiseTiledWorkspaceFloats(const ConvGeometry& g, int threads);

// As DepthwiseConvForward and DepthwiseConvBackward (depthwise_conv.h).
void DepthwiseTiledForward(ThreadPool& pool, const ConvGeometry& g, const float* in,
                           const float* weight, const float* bias, float* out, float* workspace);
void DepthwiseTiledBackward(ThreadPool& pool, const ConvGeometry& g, const float* in,
                            const float* weight, const float* d_out, float* d_in, float* d_weight,
                            float* d_bias, float* workspace);

}  // namespace mt::kernels
