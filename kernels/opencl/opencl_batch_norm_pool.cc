// Batch normalisation (fused with a clip too: kernels/batch_norm_clip.h;
// its one-pass replay: kernels/batch_norm_replay.h),
// average and global average pooling, and clip on the OpenCL backend
// (cl/batch_norm.cl, cl/avg_pool.cl, cl/elementwise.cl).
#include "kernels/op_table.h"
#include "kernels/opencl/opencl_backend.h"

namespace mt::kernels {
namespace {

// Work-group size of the per-channel batch-norm kernels (BN_GROUP in
// cl/batch_norm.cl): one group per channel.
constexpr size_t kBatchNormGroup = 64;

}  // namespace

void OpenClBackend::AvgPoolForward(const PoolGeometry& g, View in, View out) {
  // No padded kernel here (the op is left out of SupportedOps()).
  if (g.pad > 0) Unsupported(Op::kPaddedPool);
  const int planes = g.batch * g.channels, oh = g.out_h(), ow = g.out_w();
  Call("avgpool_forward")
      .Arg(in)
      .Arg(out)
      .Arg(planes)
      .Arg(g.in_h)
      .Arg(g.in_w)
      .Arg(g.size)
      .Arg(g.stride)
      .Arg(oh)
      .Arg(ow)
      .Arg(1.0f / static_cast<float>(g.size * g.size))
      .Run(queue(), static_cast<size_t>(planes) * oh * ow);
}

void OpenClBackend::AvgPoolBackward(const PoolGeometry& g, View d_out, View d_in) {
  // No padded kernel here (the op is left out of SupportedOps()).
  if (g.pad > 0) Unsupported(Op::kPaddedPool);
  const int planes = g.batch * g.channels;
  Call("avgpool_backward")
      .Arg(d_out)
      .Arg(d_in)
      .Arg(planes)
      .Arg(g.in_h)
      .Arg(g.in_w)
      .Arg(g.size)
      .Arg(g.stride)
      .Arg(g.out_h())
      .Arg(g.out_w())
      .Arg(1.0f / static_cast<float>(g.size * g.size))
      .Run(queue(), static_cast<size_t>(planes) * g.in_h * g.in_w);
}

void OpenClBackend::GlobalAvgPoolForward(View in, View out, int planes, int inner) {
  Call("global_avgpool_forward")
      .Arg(in)
      .Arg(out)
      .Arg(planes)
      .Arg(inner)
      .Arg(1.0f / static_cast<float>(inner))
      .Run(queue(), planes);
}

void OpenClBackend::GlobalAvgPoolBackward(View d_out, View d_in, int planes, int inner) {
  const int total = planes * inner;
  Call("global_avgpool_backward")
      .Arg(d_out)
      .Arg(d_in)
      .Arg(total)
      .Arg(inner)
      .Arg(1.0f / static_cast<float>(inner))
      .Run(queue(), total);
}

void OpenClBackend::BatchNormTrainingCall(const BatchNormGeometry& g, View x, View scale,
                                          View shift, View running_mean, View running_var,
                                          View save_mean, View save_invstd, View y, bool clip,
                                          float lo, float hi) {
  Call("batch_norm_forward_training")
      .Arg(x)
      .Arg(scale)
      .Arg(shift)
      .Arg(running_mean)
      .Arg(running_var)
      .Arg(save_mean)
      .Arg(save_invstd)
      .Arg(y)
      .Arg(g.batch)
      .Arg(g.channels)
      .Arg(g.inner)
      .Arg(g.epsilon)
      .Arg(g.momentum)
      .Arg(static_cast<int>(clip))
      .Arg(lo)
      .Arg(hi)
      .Run(queue(), g.channels * kBatchNormGroup, kBatchNormGroup);
}

void OpenClBackend::BatchNormInferenceCall(const BatchNormGeometry& g, View x, View scale,
                                           View shift, View running_mean, View running_var,
                                           View save_invstd, View y, bool clip, float lo,
                                           float hi) {
  Call("batch_norm_invstd")
      .Arg(running_var)
      .Arg(save_invstd)
      .Arg(g.channels)
      .Arg(g.epsilon)
      .Run(queue(), g.channels);
  BatchNormReplay(g, x, scale, shift, running_mean, save_invstd, y, clip, lo, hi);
}

void OpenClBackend::BatchNormReplay(const BatchNormGeometry& g, View x, View scale, View shift,
                                    View save_mean, View save_invstd, View y, bool clip, float lo,
                                    float hi) {
  const int total = g.batch * g.channels * g.inner;
  Call("batch_norm_forward_inference")
      .Arg(x)
      .Arg(scale)
      .Arg(shift)
      .Arg(save_mean)
      .Arg(save_invstd)
      .Arg(y)
      .Arg(total)
      .Arg(g.channels)
      .Arg(g.inner)
      .Arg(static_cast<int>(clip))
      .Arg(lo)
      .Arg(hi)
      .Run(queue(), total);
}

void OpenClBackend::BatchNormBackwardCall(const BatchNormGeometry& g, View x, View d_y, View scale,
                                          View shift, View save_mean, View save_invstd,
                                          bool batch_stats, View d_x, View d_scale, View d_shift,
                                          bool clip, float lo, float hi) {
  Call("batch_norm_backward")
      .Arg(x)
      .Arg(d_y)
      .Arg(scale)
      .Arg(shift)
      .Arg(save_mean)
      .Arg(save_invstd)
      .Arg(d_x)
      .Arg(d_scale)
      .Arg(d_shift)
      .Arg(g.batch)
      .Arg(g.channels)
      .Arg(g.inner)
      .Arg(static_cast<int>(batch_stats))
      .Arg(static_cast<int>(!d_x.empty()))
      .Arg(static_cast<int>(!d_scale.empty()))
      .Arg(static_cast<int>(!d_shift.empty()))
      .Arg(static_cast<int>(clip))
      .Arg(lo)
      .Arg(hi)
      .Run(queue(), g.channels * kBatchNormGroup, kBatchNormGroup);
}

void OpenClBackend::BatchNormForwardTraining(const BatchNormGeometry& g, View x, View scale,
                                             View shift, View running_mean, View running_var,
                                             View save_mean, View save_invstd, View y) {
  BatchNormTrainingCall(g, x, scale, shift, running_mean, running_var, save_mean, save_invstd, y,
                        false, 0.0f, 0.0f);
}

void OpenClBackend::BatchNormForwardInference(const BatchNormGeometry& g, View x, View scale,
                                              View shift, View running_mean, View running_var,
                                              View save_invstd, View y) {
  BatchNormInferenceCall(g, x, scale, shift, running_mean, running_var, save_invstd, y, false, 0.0f,
                         0.0f);
}

void OpenClBackend::BatchNormBackward(const BatchNormGeometry& g, View x, View d_y, View scale,
                                      View save_mean, View save_invstd, bool batch_stats, View d_x,
                                      View d_scale, View d_shift) {
  BatchNormBackwardCall(g, x, d_y, scale, View{}, save_mean, save_invstd, batch_stats, d_x, d_scale,
                        d_shift, false, 0.0f, 0.0f);
}

void OpenClBackend::BatchNormClipForwardTraining(const BatchNormGeometry& g, View x, View scale,
                                                 View shift, View running_mean, View running_var,
                                                 View save_mean, View save_invstd, View y, float lo,
                                                 float hi) {
  BatchNormTrainingCall(g, x, scale, shift, running_mean, running_var, save_mean, save_invstd, y,
                        true, lo, hi);
}

void OpenClBackend::BatchNormClipForwardInference(const BatchNormGeometry& g, View x, View scale,
                                                  View shift, View running_mean, View running_var,
                                                  View save_invstd, View y, float lo, float hi) {
  BatchNormInferenceCall(g, x, scale, shift, running_mean, running_var, save_invstd, y, true, lo,
                         hi);
}

void OpenClBackend::BatchNormClipBackward(const BatchNormGeometry& g, View x, View d_y, View scale,
                                          View shift, View save_mean, View save_invstd,
                                          bool batch_stats, View d_x, View d_scale, View d_shift,
                                          float lo, float hi) {
  BatchNormBackwardCall(g, x, d_y, scale, shift, save_mean, save_invstd, batch_stats, d_x, d_scale,
                        d_shift, true, lo, hi);
}

namespace {

// kernels/batch_norm_clip.h's table ops on this backend.
void ClipForwardTraining(OpenClBackend& be, const BatchNormGeometry& g, View x, View scale,
                         View shift, View running_mean, View running_var, View save_mean,
                         View save_invstd, View y, float lo, float hi) {
  be.BatchNormClipForwardTraining(g, x, scale, shift, running_mean, running_var, save_mean,
                                  save_invstd, y, lo, hi);
}

void ClipForwardInference(OpenClBackend& be, const BatchNormGeometry& g, View x, View scale,
                          View shift, View running_mean, View running_var, View save_invstd, View y,
                          float lo, float hi) {
  be.BatchNormClipForwardInference(g, x, scale, shift, running_mean, running_var, save_invstd, y,
                                   lo, hi);
}

void ClipBackward(OpenClBackend& be, const BatchNormGeometry& g, View x, View d_y, View scale,
                  View shift, View save_mean, View save_invstd, bool batch_stats, View d_x,
                  View d_scale, View d_shift, float lo, float hi) {
  be.BatchNormClipBackward(g, x, d_y, scale, shift, save_mean, save_invstd, batch_stats, d_x,
                           d_scale, d_shift, lo, hi);
}

void Replay(OpenClBackend& be, const BatchNormGeometry& g, View x, View scale, View shift,
            View save_mean, View save_invstd, View y, bool clip, float lo, float hi) {
  be.BatchNormReplay(g, x, scale, shift, save_mean, save_invstd, y, clip, lo, hi);
}

}  // namespace

MT_REGISTER_OP("batch_norm_replay", Replay);
MT_REGISTER_OP("batch_norm_clip_forward_training", ClipForwardTraining);
MT_REGISTER_OP("batch_norm_clip_forward_inference", ClipForwardInference);
MT_REGISTER_OP("batch_norm_clip_backward", ClipBackward);

void OpenClBackend::ClipForward(View in, View out, float lo, float hi) {
  const int n = static_cast<int>(in.count);
  Call("clip_forward").Arg(in).Arg(out).Arg(lo).Arg(hi).Arg(n).Run(queue(), n);
}

void OpenClBackend::ClipBackward(View out, View d_out, View d_in, float lo, float hi) {
  const int n = static_cast<int>(out.count);
  Call("clip_backward").Arg(out).Arg(d_out).Arg(d_in).Arg(lo).Arg(hi).Arg(n).Run(queue(), n);
}

}  // namespace mt::kernels
