#pragma once

#include <stdexcept>

#include "core/layers/layer.h"

namespace mt {

// The mean of each channel's whole plane: CxHxW -> C (flat), as MobileNet's
// classifier head reads it.
class GlobalAvgPool : public Layer {
 public:
  const char* Type() const override { return "global_avgpool"; }
  kernels::OpSet Ops() const override {
    return {kernels::Op::kGlobalAvgPoolForward, kernels::Op::kGlobalAvgPoolBackward};
  }
  Shape Setup(const Shape& in) override {
    if (in.rank() != 3)
      throw std::invalid_argument("global_avgpool: needs a CxHxW input, got " + in.ToString());
    channels_ = in[0];
    inner_ = in[1] * in[2];
    return Shape{channels_};
  }
  // Backward reads only the input's batch size, not its values.
  bool BackwardNeedsInput() const override { return false; }
  bool BackwardNeedsOutput() const override { return false; }
  void Forward(const Tensor& in, const Tensor& out, const ForwardContext&) override {
    backend().GlobalAvgPoolForward(in.view, out.view, in.batch() * channels_, inner_);
  }
  void Backward(const Tensor& in, const Tensor&, const Tensor& d_out, const Tensor& d_in) override {
    if (d_in.view.empty()) return;
    backend().GlobalAvgPoolBackward(d_out.view, d_in.view, in.batch() * channels_, inner_);
  }

 private:
  int channels_ = 0, inner_ = 0;
};

}  // namespace mt
