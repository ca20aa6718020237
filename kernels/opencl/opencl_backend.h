// The OpenCL backend: GEMM through CLBlast, everything else mt's own kernels
// (kernels/opencl/cl/*.cl, embedded at build time). Data stays on the
// device between ops; only Upload, Download and SoftmaxCrossEntropy (which
// returns the loss) wait for the device.
//
// One in-order queue per backend, so ops run in the order they are called.
// A backend is used from one thread at a time (kernel objects carry their
// arguments); the context and the compiled program are shared by every
// backend on the same device (OpenClRuntime).
//
// Conv is im2col over a group of samples + one GEMM + a gather to NCHW; the
// group is as large as a fixed workspace cap allows, so the workspace does
// not grow without bound with the batch.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kernels/backend.h"
#include "kernels/opencl/cl_handle.h"
#include "kernels/opencl/kernel_call.h"
#include "kernels/opencl/opencl_runtime.h"

namespace mt::kernels {

class OpenClBackend : public Backend {
 public:
  explicit OpenClBackend(const OpenClDevice& device);
  ~OpenClBackend() override;

  const OpenClDevice& device() const { return runtime_->device(); }
  // The cl_mem behind a view of this backend's memory.
  static cl_mem Mem(View v);

  std::string Name() const override { return "opencl"; }
  OpSet SupportedOps() const override;

  std::unique_ptr<Buffer> Allocate(size_t count) override;
  void Upload(const void* host, View dst) override;
  void Download(View src, void* host) override;
  void Copy(View src, View dst) override;
  void Fill(View dst, float value) override;
  void Synchronize() override;

  void Gemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, View a, View b,
            float beta, View c) override;
  void Axpy(float alpha, View x, View y) override;
  void Scale(float alpha, View x) override;

  size_t ConvWorkspaceCount(const ConvGeometry& g) const override;
  void Conv2dForward(const ConvGeometry& g, View in, View weight, View bias, View out,
                     View workspace) override;
  void Conv2dBackward(const ConvGeometry& g, View in, View weight, View d_out, View d_in,
                      View d_weight, View d_bias, View workspace) override;

  void MaxPoolForward(const PoolGeometry& g, View in, View out, View argmax) override;
  void MaxPoolBackward(const PoolGeometry& g, View d_out, View argmax, View d_in) override;
  void AvgPoolForward(const PoolGeometry& g, View in, View out) override;
  void AvgPoolBackward(const PoolGeometry& g, View d_out, View d_in) override;
  void GlobalAvgPoolForward(View in, View out, int planes, int inner) override;
  void GlobalAvgPoolBackward(View d_out, View d_in, int planes, int inner) override;

  void BatchNormForwardTraining(const BatchNormGeometry& g, View x, View scale, View shift,
                                View running_mean, View running_var, View save_mean,
                                View save_invstd, View y) override;
  void BatchNormForwardInference(const BatchNormGeometry& g, View x, View scale, View shift,
                                 View running_mean, View running_var, View save_invstd,
                                 View y) override;
  void BatchNormBackward(const BatchNormGeometry& g, View x, View d_y, View scale, View save_mean,
                         View save_invstd, bool batch_stats, View d_x, View d_scale,
                         View d_shift) override;

  // Batch norm with the clip of a fused ReLU or ReLU6: the ops of
  // kernels/batch_norm_clip.h, registered as table ops in
  // opencl_batch_norm_pool.cc.
  void BatchNormClipForwardTraining(const BatchNormGeometry& g, View x, View scale, View shift,
                                    View running_mean, View running_var, View save_mean,
                                    View save_invstd, View y, float lo, float hi);
  void BatchNormClipForwardInference(const BatchNormGeometry& g, View x, View scale, View shift,
                                     View running_mean, View running_var, View save_invstd, View y,
                                     float lo, float hi);
  void BatchNormClipBackward(const BatchNormGeometry& g, View x, View d_y, View scale, View shift,
                             View save_mean, View save_invstd, bool batch_stats, View d_x,
                             View d_scale, View d_shift, float lo, float hi);
  // kernels/batch_norm_replay.h's op: the inference kernel's affine map
  // over the saved statistics, formed as the training kernel forms it.
  void BatchNormReplay(const BatchNormGeometry& g, View x, View scale, View shift, View save_mean,
                       View save_invstd, View y, bool clip, float lo, float hi);

  void AddBias(View x, View bias, int outer, int channels, int inner) override;
  void BiasGrad(View d_x, View d_bias, int outer, int channels, int inner) override;
  void ReluForward(View in, View out) override;
  void ReluBackward(View out, View d_out, View d_in) override;
  void ClipForward(View in, View out, float lo, float hi) override;
  void ClipBackward(View out, View d_out, View d_in, float lo, float hi) override;
  void DropoutForward(View in, View out, View mask, float rate, uint64_t seed) override;
  void DropoutBackward(View d_out, View mask, float rate, View d_in) override;
  double SoftmaxCrossEntropy(View logits, View labels, int n, int classes, View d_logits) override;
  void ArgmaxRows(View logits, int n, int classes, View out) override;

  void SgdUpdate(const SgdHyper& h, View params, View grads, View velocity) override;
  void AdamUpdate(const AdamHyper& h, View params, View grads, View m, View v) override;

 private:
  // The named kernel of mt's program, created on first use and kept.
  KernelCall Call(const char* kernel);
  cl_command_queue queue() const { return queue_.get(); }
  const std::string& device_name() const { return runtime_->device_name(); }
  // The batch-norm kernels; clip false writes (and differentiates) the
  // normalised values unclipped, and the backward pass then reads no shift.
  void BatchNormTrainingCall(const BatchNormGeometry& g, View x, View scale, View shift,
                             View running_mean, View running_var, View save_mean, View save_invstd,
                             View y, bool clip, float lo, float hi);
  void BatchNormInferenceCall(const BatchNormGeometry& g, View x, View scale, View shift,
                              View running_mean, View running_var, View save_invstd, View y,
                              bool clip, float lo, float hi);
  void BatchNormBackwardCall(const BatchNormGeometry& g, View x, View d_y, View scale, View shift,
                             View save_mean, View save_invstd, bool batch_stats, View d_x,
                             View d_scale, View d_shift, bool clip, float lo, float hi);
  // Conv2dForward/Backward for groups > 1 (opencl_grouped_conv.cc).
  void GroupedConv2dForward(const ConvGeometry& g, View in, View weight, View bias, View out);
  void GroupedConv2dBackward(const ConvGeometry& g, View in, View weight, View d_out, View d_in,
                             View d_weight, View d_bias);

  std::shared_ptr<OpenClRuntime> runtime_;
  ClQueue queue_;
  std::map<std::string, ClKernel> kernels_;
  // Per-row losses of SoftmaxCrossEntropy, read back and summed on the host
  // in row order (so the sum does not depend on the device); grows once.
  std::unique_ptr<Buffer> row_loss_;
  std::vector<float> row_loss_host_;
};

}  // namespace mt::kernels
