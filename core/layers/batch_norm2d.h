#pragma once

#include <memory>

#include "core/layers/layer.h"

namespace mt {

// Batch normalisation per channel of a CxHxW input (or a flat C one, as
// 1x1 planes), after PyTorch's BatchNorm2d: parameters scale [C] then shift
// [C] (initially 1 and 0), running statistics mean [C] then variance [C]
// (initially 0 and 1). Training normalises with the batch's statistics and
// moves the running ones towards them; evaluation, and a frozen layer in
// training too, applies the running ones as a fixed affine map.
class BatchNorm2D : public Layer {
 public:
  static constexpr float kDefaultEpsilon = 1e-5f;
  static constexpr float kDefaultMomentum = 0.1f;

  // 0 for either means its default (the proto's convention).
  BatchNorm2D(float epsilon, float momentum);

  const char* Type() const override { return "batchnorm"; }
  kernels::OpSet Ops() const override;
  Shape Setup(const Shape& in_sample) override;
  size_t ParamCount() const override { return 2 * static_cast<size_t>(geom_.channels); }
  void BindParams(kernels::View params, kernels::View grads) override;
  void InitParams(Rng& rng, float* host) const override;
  size_t RunningStatCount() const override { return 2 * static_cast<size_t>(geom_.channels); }
  void BindRunningStats(kernels::View stats) override;
  void InitRunningStats(float* host) const override;
  void Reshape(int capacity) override;
  // The saved mean and 1 / sqrt(var + eps), whatever the batch.
  size_t StateBytes(int capacity) const override { return ParamCount() * sizeof(float); }
  // Never: even a fused clip takes its mask from the input, through the
  // saved statistics (kernels/cpu/batch_norm.cc).
  bool BackwardNeedsOutput() const override { return BackwardReadsOutput(); }
  // A replay of a training pass applies the statistics that pass saved
  // (kernels/batch_norm_replay.h: one pass, its output bit for bit); on a
  // backend without that op it recomputes them from the same input with
  // momentum 0. Either way the running statistics stay exactly as they are.
  bool Replayable() const override { return true; }
  // The normalisation of its input (and the clip mask rebuilt from it)
  // cancels its mean: a 16-bit input would lose the bits that remain.
  bool BackwardNeedsExactInput() const override { return true; }
  // Both backends' kernels finish a channel's sums before writing its d_x,
  // element for element from d_y (kernels/cpu/batch_norm.cc, batch_norm.cl);
  // a kernel fused with a clip must allow it too.
  bool GradientInPlace() const override { return true; }
  void Forward(const Tensor& in, const Tensor& out, const ForwardContext& ctx) override;
  void Backward(const Tensor& in, const Tensor& out, const Tensor& d_out,
                const Tensor& d_in) override;

  // Fuses the ReLU (lo 0, hi +inf) or ReLU6 (lo 0, hi 6) that runs in place
  // over this layer's output (core/model/fusion.cc): Forward writes the
  // clipped output, and Backward takes the gradient of the clipped output
  // and masks it from its input (the output is not read, so a layer after
  // the activation may still run in place over it). Needs
  // kernels::BatchNormClipOps() on the layer's backend.
  void FuseClip(float lo, float hi);
  bool clips() const { return clips_; }

  float epsilon() const { return geom_.epsilon; }
  float momentum() const { return geom_.momentum; }

 private:
  kernels::BatchNormGeometry GeometryFor(int batch) const;

  kernels::BatchNormGeometry geom_;
  kernels::View scale_, shift_, d_scale_, d_shift_;
  kernels::View running_mean_, running_var_;
  // save_mean [C] then save_invstd [C], written by Forward for Backward.
  std::unique_ptr<kernels::Buffer> saved_;
  kernels::View save_mean_, save_invstd_;
  // Whether the last Forward normalised with the batch's statistics, which
  // decides what Backward differentiates.
  bool used_batch_stats_ = false;
  // Whether the backend has kernels::kBatchNormReplay.
  bool replays_in_one_pass_ = false;
  bool clips_ = false;
  float clip_lo_ = 0.0f, clip_hi_ = 0.0f;
};

}  // namespace mt
