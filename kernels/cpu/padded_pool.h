// Max and average pooling with symmetric padding (PoolGeometry::pad > 0),
// as ONNX's MaxPool and AveragePool with pads: padded cells are never read,
// so a window near the border holds fewer inputs. Kept apart from the
// unpadded kernels (pool.cc, avg_pool.cc), whose fast paths assume every
// window lies inside the input.
#pragma once

#include <cstdint>

#include "kernels/geometry.h"

namespace mt::kernels {

class ThreadPool;

// argmax as MaxPoolForward's (plane-local input indices), so MaxPoolBackward
// serves both.
void PaddedMaxPoolForward(ThreadPool& pool, const PoolGeometry& g, const float* in, float* out,
                          int32_t* argmax);
void PaddedAvgPoolForward(ThreadPool& pool, const PoolGeometry& g, const float* in, float* out);
// Overwrites d_in.
void PaddedAvgPoolBackward(ThreadPool& pool, const PoolGeometry& g, const float* d_out,
                           float* d_in);

}  // namespace mt::kernels
