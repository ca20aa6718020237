#pragma once

#include <string>
#include <vector>

#include "core/layers/layer.h"

namespace mt {

// The elementwise sum of two or more inputs of one shape: a skip connection
// (a residual block's input added to its output). Each input's gradient is
// the output's gradient.
class Add : public Layer {
 public:
  const char* Type() const override { return "add"; }
  kernels::OpSet Ops() const override { return {kernels::Op::kAxpy}; }
  bool TakesInputs(int count) const override { return count >= 2; }
  bool BackwardNeedsInput() const override { return false; }
  bool BackwardNeedsOutput() const override { return false; }
  bool Replayable() const override { return true; }

  Shape Setup(const Shape& in_sample) override { return in_sample; }
  Shape SetupInputs(const std::vector<Shape>& in) override {
    for (size_t k = 1; k < in.size(); ++k)
      if (in[k] != in[0])
        throw std::invalid_argument("add: input " + std::to_string(k + 1) + " is " +
                                    in[k].ToString() + ", input 1 is " + in[0].ToString() +
                                    "; added inputs must have one shape");
    return in[0];
  }

  void ForwardInputs(const std::vector<Tensor>& in, const Tensor& out,
                     const ForwardContext&) override {
    backend().Copy(in[0].view, out.view);
    for (size_t k = 1; k < in.size(); ++k) backend().Axpy(1.0f, in[k].view, out.view);
  }
  void BackwardInputs(const std::vector<Tensor>&, const Tensor&, const Tensor& d_out,
                      const std::vector<Tensor>& d_in) override {
    for (const Tensor& d : d_in)
      if (!d.view.empty()) backend().Copy(d_out.view, d.view);
  }

  // Only the multi-input forms are ever called (TakesInputs refuses one input).
  void Forward(const Tensor& in, const Tensor& out, const ForwardContext&) override {
    backend().Copy(in.view, out.view);
  }
  void Backward(const Tensor&, const Tensor&, const Tensor& d_out, const Tensor& d_in) override {
    if (!d_in.view.empty()) backend().Copy(d_out.view, d_in.view);
  }
};

}  // namespace mt
