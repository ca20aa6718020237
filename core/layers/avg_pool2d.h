#pragma once

#include "core/layers/layer.h"

namespace mt {

// Average pooling over square windows, no padding (PyTorch's AvgPool2d
// with padding 0): each output the mean of its size x size inputs.
class AvgPool2D : public Layer {
 public:
  // stride 0 means `size` (the proto's convention).
  AvgPool2D(int size, int stride);

  const char* Type() const override { return "avgpool"; }
  kernels::OpSet Ops() const override {
    return {kernels::Op::kAvgPoolForward, kernels::Op::kAvgPoolBackward};
  }
  Shape Setup(const Shape& in_sample) override;
  void Forward(const Tensor& in, const Tensor& out, const ForwardContext& ctx) override;
  void Backward(const Tensor& in, const Tensor& out, const Tensor& d_out,
                const Tensor& d_in) override;

 private:
  kernels::PoolGeometry GeometryFor(int batch) const;

  kernels::PoolGeometry geom_;
};

}  // namespace mt
