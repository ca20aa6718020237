// Batch normalisation fused with the ReLU or ReLU6 after it, as table ops
// (kernels/op_table.h): the Backend's three batch-norm ops, the output
// clipped to [lo, hi] (ReLU: 0, +inf; ReLU6: 0, 6) as it is written, and
// the backward pass masking the output's gradient where the forward pass's
// value before the clip is inside (lo, hi): formed again from x, scale,
// shift and the saved statistics exactly as the forward pass formed it, so
// the output itself is not read. A backend without them runs
// the pair unfused. The CPU's are in kernels/cpu/ops/batch_norm_clip.cc,
// OpenCL's in kernels/opencl/opencl_batch_norm_pool.cc.
#pragma once

#include "kernels/buffer.h"
#include "kernels/geometry.h"
#include "kernels/op_table.h"

namespace mt::kernels {

// (g, x, scale, shift, running_mean, running_var, save_mean, save_invstd, y, lo, hi)
inline const TableOp<void(const BatchNormGeometry&, View, View, View, View, View, View, View, View,
                          float, float)>
    kBatchNormClipForwardTraining{"batch_norm_clip_forward_training"};
// (g, x, scale, shift, running_mean, running_var, save_invstd, y, lo, hi)
inline const TableOp<void(const BatchNormGeometry&, View, View, View, View, View, View, View, float,
                          float)>
    kBatchNormClipForwardInference{"batch_norm_clip_forward_inference"};
// (g, x, d_y, scale, shift, save_mean, save_invstd, batch_stats, d_x,
// d_scale, d_shift, lo, hi), the Backend op's arguments with shift and the
// bounds added; d_x may be d_y.
inline const TableOp<void(const BatchNormGeometry&, View, View, View, View, View, View, bool, View,
                          View, View, float, float)>
    kBatchNormClipBackward{"batch_norm_clip_backward"};

inline OpSet BatchNormClipOps() {
  return {kBatchNormClipForwardTraining.op(), kBatchNormClipForwardInference.op(),
          kBatchNormClipBackward.op()};
}

}  // namespace mt::kernels
