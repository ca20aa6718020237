// The one-pass replay of a training batch norm's output (with or without a
// fused clip, kernels/batch_norm_clip.h), as a table op (kernels/op_table.h):
// y = clip(x * a + b), a and b formed from scale, shift and the statistics
// the training pass saved exactly as that pass formed them, so y is bit for
// bit what it wrote, without the statistics pass and leaving the running
// statistics alone. Recomputation (core/model/activation_plan.h) uses it;
// a backend without it replays the training pass with momentum 0. The
// CPU's is in kernels/cpu/ops/batch_norm_replay.cc, OpenCL's in
// kernels/opencl/opencl_batch_norm_pool.cc.
#pragma once

#include "kernels/buffer.h"
#include "kernels/geometry.h"
#include "kernels/op_table.h"

namespace mt::kernels {

// (g, x, scale, shift, save_mean, save_invstd, y, clip, lo, hi); clip false
// leaves the values unclipped (lo, hi unused).
inline const TableOp<void(const BatchNormGeometry&, View, View, View, View, View, View, bool, float,
                          float)>
    kBatchNormReplay{"batch_norm_replay"};

}  // namespace mt::kernels
