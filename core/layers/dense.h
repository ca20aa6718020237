#pragma once

#include "core/layers/layer.h"

namespace mt {

// Fully connected: y = x W^T + b, with W [units][inputs] (PyTorch's layout)
// followed by b [units] in the parameter buffer.
class Dense : public Layer {
 public:
  explicit Dense(int units);

  const char* Type() const override { return "dense"; }
  kernels::OpSet Ops() const override {
    return {kernels::Op::kGemm, kernels::Op::kAddBias, kernels::Op::kBiasGrad};
  }
  Shape Setup(const Shape& in_sample) override;
  size_t ParamCount() const override;
  void BindParams(kernels::View params, kernels::View grads) override;
  void InitParams(Rng& rng, float* host) const override;
  std::vector<ParamMatrix> ParamMatrices() const override {
    return {{0, static_cast<size_t>(units_), static_cast<size_t>(inputs_)}};
  }
  bool BackwardNeedsOutput() const override { return false; }
  void Forward(const Tensor& in, const Tensor& out, const ForwardContext& ctx) override;
  void Backward(const Tensor& in, const Tensor& out, const Tensor& d_out,
                const Tensor& d_in) override;

 private:
  int units_;
  int inputs_ = 0;
  kernels::View weight_, bias_, d_weight_, d_bias_;
};

}  // namespace mt
