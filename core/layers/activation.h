// The elementwise activations of kernels/activation.h as layers: one class
// for the family, so a new activation kind is its registry entry (in
// core/layers/<kind>.cc) and its formula, not a new layer class.
#pragma once

#include "core/layers/layer.h"
#include "kernels/activation.h"

namespace mt {

class ActivationLayer : public Layer {
 public:
  // `type` is the kind's proto field name, a literal.
  ActivationLayer(const char* type, kernels::Activation f, kernels::ActivationParams p = {})
      : type_(type), f_(f), p_(p) {}

  const char* Type() const override { return type_; }
  kernels::OpSet Ops() const override {
    return {kernels::Op::kActivationForward, kernels::Op::kActivationBackward};
  }
  Shape Setup(const Shape& in_sample) override { return in_sample; }
  // Not in place: the backward pass reads the input.
  bool BackwardNeedsOutput() const override { return false; }
  bool Replayable() const override { return true; }
  void Forward(const Tensor& in, const Tensor& out, const ForwardContext&) override {
    backend().ActivationForward(f_, p_, in.view, out.view);
  }
  void Backward(const Tensor& in, const Tensor&, const Tensor& d_out, const Tensor& d_in) override {
    if (!d_in.view.empty()) backend().ActivationBackward(f_, p_, in.view, d_out.view, d_in.view);
  }

 private:
  const char* type_;
  kernels::Activation f_;
  kernels::ActivationParams p_;
};

}  // namespace mt
