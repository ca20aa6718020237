// Max pooling on host memory. argmax holds, per output, the index of the
// chosen input within its own (sample, channel) plane: iy * in_w + ix.
#pragma once

#include <cstdint>

#include "kernels/geometry.h"

namespace mt::kernels {

class ThreadPool;

// Ties go to the first maximum in row-major window order.
void MaxPoolForward(ThreadPool& pool, const PoolGeometry& g, const float* in, float* out,
                    int32_t* argmax);
// Overwrites d_in: zero, then each output gradient added at its argmax.
void MaxPoolBackward(ThreadPool& pool, const PoolGeometry& g, const float* d_out,
                     const int32_t* argmax, float* d_in);

}  // namespace mt::kernels
