#pragma once

#include <memory>

#include "core/layers/layer.h"

namespace mt {

// Square-kernel 2-D convolution with bias; parameters are laid out as
// weight [filters][in_c][k][k] followed by bias [filters].
class Conv2D : public Layer {
 public:
  Conv2D(int filters, int kernel, int stride, int padding);

  const char* Type() const override { return "conv"; }
  kernels::OpSet Ops() const override {
    return {kernels::Op::kConv2dForward, kernels::Op::kConv2dBackward};
  }
  Shape Setup(const Shape& in_sample) override;
  size_t ParamCount() const override;
  void BindParams(kernels::View params, kernels::View grads) override;
  void InitParams(Rng& rng, float* host) const override;
  void Reshape(int capacity) override;
  size_t StateBytes(int capacity) const override;
  void Forward(const Tensor& in, const Tensor& out, const ForwardContext& ctx) override;
  void Backward(const Tensor& in, const Tensor& out, const Tensor& d_out,
                const Tensor& d_in) override;

  const kernels::ConvGeometry& geometry() const { return geom_; }

 private:
  kernels::ConvGeometry GeometryFor(int batch) const;

  kernels::ConvGeometry geom_;
  kernels::View weight_, bias_, d_weight_, d_bias_;
  std::unique_ptr<kernels::Buffer> workspace_;
};

}  // namespace mt
