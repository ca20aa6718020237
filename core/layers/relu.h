#pragma once

#include "core/layers/layer.h"

namespace mt {

class ReLU : public Layer {
 public:
  const char* Type() const override { return "relu"; }
  kernels::OpSet Ops() const override {
    return {kernels::Op::kReluForward, kernels::Op::kReluBackward};
  }
  Shape Setup(const Shape& in_sample) override { return in_sample; }
  bool InPlace() const override { return true; }
  bool BackwardNeedsInput() const override { return false; }
  bool Replayable() const override { return true; }
  void Forward(const Tensor& in, const Tensor& out, const ForwardContext&) override {
    if (!absorbed_by()) backend().ReluForward(in.view, out.view);
  }
  void Backward(const Tensor&, const Tensor& out, const Tensor& d_out,
                const Tensor& d_in) override {
    if (!d_in.view.empty() && !absorbed_by())
      backend().ReluBackward(out.view, d_out.view, d_in.view);
  }
};

}  // namespace mt
