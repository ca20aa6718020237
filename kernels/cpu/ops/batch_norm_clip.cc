// Batch normalisation fused with the clip of a ReLU (lo 0, hi +inf) or
// ReLU6 (lo 0, hi 6) on the CPU, table ops (kernels/op_table.h): the
// Backend's batch-norm ops with the activation folded into their passes
// (kernels/cpu/batch_norm.h), so the activation's own passes do not run.
//
//   batch_norm_clip_forward_training / _inference: the Backend op's
//     arguments, then lo, hi; y = min(max(bn(x), lo), hi).
//   batch_norm_clip_backward(g, x, d_y, scale, shift, save_mean, save_invstd,
//     batch_stats, d_x, d_scale, d_shift, lo, hi): BatchNormBackward of d_y
//     (the clipped output's gradient) masked where the value before the clip
//     is inside (lo, hi); d_x may be d_y; empty d_x, d_scale or d_shift are
//     skipped.
#include "kernels/cpu/batch_norm.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/op_table.h"

namespace mt::kernels {
namespace {

float* DataOrNull(View v) { return v.empty() ? nullptr : CpuBackend::Data(v); }

void ClipForwardTraining(CpuBackend& be, const BatchNormGeometry& g, View x, View scale, View shift,
                         View running_mean, View running_var, View save_mean, View save_invstd,
                         View y, float lo, float hi) {
  using D = CpuBackend;
  BatchNormForwardTraining(be.pool(), g, D::Data(x), D::Data(scale), D::Data(shift),
                           D::Data(running_mean), D::Data(running_var), D::Data(save_mean),
                           D::Data(save_invstd), D::Data(y), OutputClip{true, lo, hi});
}

void ClipForwardInference(CpuBackend& be, const BatchNormGeometry& g, View x, View scale,
                          View shift, View running_mean, View running_var, View save_invstd, View y,
                          float lo, float hi) {
  using D = CpuBackend;
  BatchNormForwardInference(be.pool(), g, D::Data(x), D::Data(scale), D::Data(shift),
                            D::Data(running_mean), D::Data(running_var), D::Data(save_invstd),
                            D::Data(y), OutputClip{true, lo, hi});
}

void ClipBackward(CpuBackend& be, const BatchNormGeometry& g, View x, View d_y, View scale,
                  View shift, View save_mean, View save_invstd, bool batch_stats, View d_x,
                  View d_scale, View d_shift, float lo, float hi) {
  using D = CpuBackend;
  BatchNormBackward(be.pool(), g, D::Data(x), D::Data(d_y), D::Data(scale), D::Data(save_mean),
                    D::Data(save_invstd), batch_stats, DataOrNull(d_x), DataOrNull(d_scale),
                    DataOrNull(d_shift), OutputClip{true, lo, hi}, D::Data(shift));
}

}  // namespace

MT_REGISTER_OP("batch_norm_clip_forward_training", ClipForwardTraining);
MT_REGISTER_OP("batch_norm_clip_forward_inference", ClipForwardInference);
MT_REGISTER_OP("batch_norm_clip_backward", ClipBackward);

}  // namespace mt::kernels
