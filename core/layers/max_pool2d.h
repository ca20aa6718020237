#pragma once

#include <memory>

#include "core/layers/layer.h"

namespace mt {

// Max pooling, with optional symmetric padding whose cells are never the
// maximum (ONNX's MaxPool pads); remembers where each maximum came from so
// the backward pass routes gradients without re-reading the input.
class MaxPool2D : public Layer {
 public:
  MaxPool2D(int size, int stride, int padding = 0);

  const char* Type() const override { return "maxpool"; }
  kernels::OpSet Ops() const override {
    if (geom_.pad > 0)
      return {kernels::Op::kMaxPoolForward, kernels::Op::kMaxPoolBackward,
              kernels::Op::kPaddedPool};
    return {kernels::Op::kMaxPoolForward, kernels::Op::kMaxPoolBackward};
  }
  Shape Setup(const Shape& in_sample) override;
  void Reshape(int capacity) override;
  size_t StateBytes(int capacity) const override;
  void Forward(const Tensor& in, const Tensor& out, const ForwardContext& ctx) override;
  void Backward(const Tensor& in, const Tensor& out, const Tensor& d_out,
                const Tensor& d_in) override;

 private:
  kernels::PoolGeometry GeometryFor(int batch) const;

  kernels::PoolGeometry geom_;
  std::unique_ptr<kernels::Buffer> argmax_;
};

}  // namespace mt
