#pragma once

#include "core/layers/layer.h"

namespace mt {

// Average pooling over square windows (PyTorch's AvgPool2d): each output the
// mean of its window's inputs; with padding, the window's cells inside the
// input divided by their count, or by size * size when count_pad.
class AvgPool2D : public Layer {
 public:
  // stride 0 means `size` (the proto's convention).
  AvgPool2D(int size, int stride, int padding = 0, bool count_pad = false);

  const char* Type() const override { return "avgpool"; }
  kernels::OpSet Ops() const override {
    if (geom_.pad > 0)
      return {kernels::Op::kAvgPoolForward, kernels::Op::kAvgPoolBackward,
              kernels::Op::kPaddedPool};
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
