#pragma once

#include "core/layers/layer.h"

namespace mt {

// Square-kernel 2-D convolution, optionally grouped (groups == input
// channels is depthwise) and without bias; parameters are laid out as weight
// [filters][in_c / groups][k][k] followed, unless there is no bias, by bias
// [filters].
class Conv2D : public Layer {
 public:
  Conv2D(int filters, int kernel, int stride, int padding, int groups = 1, bool bias = true);

  const char* Type() const override { return "conv"; }
  // A grouped conv runs only where the backend's conv handles groups.
  kernels::OpSet Ops() const override {
    if (geom_.groups > 1) {
      return {kernels::Op::kConv2dForward, kernels::Op::kConv2dBackward,
              kernels::Op::kGroupedConv2d};
    }
    return {kernels::Op::kConv2dForward, kernels::Op::kConv2dBackward};
  }
  Shape Setup(const Shape& in_sample) override;
  size_t ParamCount() const override;
  void BindParams(kernels::View params, kernels::View grads) override;
  void InitParams(Rng& rng, float* host) const override;
  std::vector<ParamMatrix> ParamMatrices() const override {
    return {{0, static_cast<size_t>(geom_.out_c), static_cast<size_t>(geom_.patch())}};
  }
  size_t WorkspaceFloats(int capacity) const override;
  void BindWorkspace(kernels::View workspace) override { workspace_ = workspace; }
  bool BackwardNeedsOutput() const override { return false; }
  // A pointwise conv over few channels (MobileNet's expansions) costs at most
  // kMaxReplayPatch multiply-adds per output value, about what batch norm
  // costs, and its output is among the widest: worth recomputing.
  static constexpr int kMaxReplayPatch = 32;
  bool Replayable() const override {
    return geom_.kernel == 1 && geom_.groups == 1 && geom_.patch() <= kMaxReplayPatch;
  }
  void Forward(const Tensor& in, const Tensor& out, const ForwardContext& ctx) override;
  void Backward(const Tensor& in, const Tensor& out, const Tensor& d_out,
                const Tensor& d_in) override;

  const kernels::ConvGeometry& geometry() const { return geom_; }
  bool has_bias() const { return has_bias_; }

 private:
  kernels::ConvGeometry GeometryFor(int batch) const;

  kernels::ConvGeometry geom_;
  bool has_bias_;
  kernels::View weight_, bias_, d_weight_, d_bias_;  // bias_, d_bias_ empty without bias
  kernels::View workspace_;                          // the model's, shared with the other layers
};

}  // namespace mt
