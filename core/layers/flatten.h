#pragma once

#include "core/layers/layer.h"

namespace mt {

// Only the shape changes: NCHW is already contiguous per sample, so the
// in-place output is the input itself and both passes do nothing.
class Flatten : public Layer {
 public:
  const char* Type() const override { return "flatten"; }
  // None: it only reshapes, so it runs in place wherever its input is.
  kernels::OpSet Ops() const override { return {}; }
  Shape Setup(const Shape& in_sample) override {
    return Shape{static_cast<int>(in_sample.count())};
  }
  bool InPlace() const override { return true; }
  bool BackwardNeedsInput() const override { return false; }
  bool BackwardNeedsOutput() const override { return false; }
  bool Replayable() const override { return true; }
  void Forward(const Tensor&, const Tensor&, const ForwardContext&) override {}
  void Backward(const Tensor&, const Tensor&, const Tensor&, const Tensor&) override {}
};

}  // namespace mt
