#pragma once

#include <memory>

#include "core/layers/layer.h"

namespace mt {

// Inverted dropout: scales kept activations by 1/(1-rate) while training so
// evaluation is the identity.
class Dropout : public Layer {
 public:
  explicit Dropout(float rate);

  const char* Type() const override { return "dropout"; }
  kernels::OpSet Ops() const override {
    return {kernels::Op::kDropoutForward, kernels::Op::kDropoutBackward};
  }
  Shape Setup(const Shape& in_sample) override;
  bool InPlace() const override { return true; }
  // Backward reads only its mask; a replay draws the same mask (the seed is
  // the step's and the layer's).
  bool BackwardNeedsInput() const override { return false; }
  bool BackwardNeedsOutput() const override { return false; }
  bool Replayable() const override { return true; }
  void Reshape(int capacity) override;
  size_t StateBytes(int capacity) const override { return capacity * per_sample_ * sizeof(float); }
  void Forward(const Tensor& in, const Tensor& out, const ForwardContext& ctx) override;
  void Backward(const Tensor& in, const Tensor& out, const Tensor& d_out,
                const Tensor& d_in) override;

 private:
  float rate_;
  size_t per_sample_ = 0;
  bool last_training_ = false;
  std::unique_ptr<kernels::Buffer> mask_;
};

}  // namespace mt
