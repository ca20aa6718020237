#pragma once

#include "core/layers/layer.h"

namespace mt {

// min(max(x, 0), 6), MobileNetV2's activation. In place like ReLU, but its
// backward pass reads the output's value (which side of 6 it is), not just
// its sign, so an in-place layer after it must not change it.
class ReLU6 : public Layer {
 public:
  static constexpr float kCeiling = 6.0f;

  const char* Type() const override { return "relu6"; }
  kernels::OpSet Ops() const override {
    return {kernels::Op::kClipForward, kernels::Op::kClipBackward};
  }
  Shape Setup(const Shape& in_sample) override { return in_sample; }
  bool InPlace() const override { return true; }
  bool BackwardReadsOutput() const override { return true; }
  bool BackwardNeedsInput() const override { return false; }
  bool Replayable() const override { return true; }
  void Forward(const Tensor& in, const Tensor& out, const ForwardContext&) override {
    if (!absorbed_by()) backend().ClipForward(in.view, out.view, 0.0f, kCeiling);
  }
  // d_in = d_out where 0 < out < 6: the clipped inputs pass no gradient.
  void Backward(const Tensor&, const Tensor& out, const Tensor& d_out,
                const Tensor& d_in) override {
    if (!d_in.view.empty() && !absorbed_by())
      backend().ClipBackward(out.view, d_out.view, d_in.view, 0.0f, kCeiling);
  }
};

}  // namespace mt
