// mul: the product of two inputs, either of one shape or a [C][H][W] input
// times a flat [C] one that scales each channel (the gate of a
// squeeze-and-excitation block). Both are one op, a table op of the kernel
// files (kernels/cpu/ops/row_scale.cc): rows of `inner` values, each scaled
// by one value of the second input (inner 1 for the same-shaped product).
#include <stdexcept>
#include <string>

#include "core/layers/layer_registry.h"
#include "kernels/op_table.h"

namespace mt {
namespace {

using kernels::View;
// (x, scale, out, rows, inner)
const kernels::TableOp<void(View, View, View, int, int)> kRowScaleForward{"row_scale_forward"};
// (x, scale, d_out, d_x, d_scale, rows, inner)
const kernels::TableOp<void(View, View, View, View, View, int, int)> kRowScaleBackward{
    "row_scale_backward"};

class Mul : public Layer {
 public:
  const char* Type() const override { return "mul"; }
  kernels::OpSet Ops() const override { return {kRowScaleForward.op(), kRowScaleBackward.op()}; }
  bool TakesInputs(int count) const override { return count == 2; }

  Shape Setup(const Shape& in_sample) override {
    throw std::invalid_argument("mul: needs two inputs");
  }
  Shape SetupInputs(const std::vector<Shape>& in) override {
    if (in[0] == in[1]) {
      rows_ = static_cast<int>(in[0].count());
      inner_ = 1;
    } else if (in[0].rank() == 3 && in[1].rank() == 1 && in[1][0] == in[0][0]) {
      rows_ = in[0][0];
      inner_ = in[0][1] * in[0][2];
    } else {
      throw std::invalid_argument("mul: inputs " + in[0].ToString() + " and " + in[1].ToString() +
                                  " are neither of one shape nor CxHxW times C (a channel scale)");
    }
    return in[0];
  }

  void ForwardInputs(const std::vector<Tensor>& in, const Tensor& out,
                     const ForwardContext&) override {
    kRowScaleForward(backend(), in[0].view, in[1].view, out.view, in[0].batch() * rows_, inner_);
  }
  void BackwardInputs(const std::vector<Tensor>& in, const Tensor&, const Tensor& d_out,
                      const std::vector<Tensor>& d_in) override {
    kRowScaleBackward(backend(), in[0].view, in[1].view, d_out.view, d_in[0].view, d_in[1].view,
                      in[0].batch() * rows_, inner_);
  }

  // Only the two-input forms are ever called (TakesInputs refuses one input).
  void Forward(const Tensor&, const Tensor&, const ForwardContext&) override {
    throw std::logic_error("mul: needs two inputs");
  }
  void Backward(const Tensor&, const Tensor&, const Tensor&, const Tensor&) override {
    throw std::logic_error("mul: needs two inputs");
  }

 private:
  int rows_ = 0, inner_ = 1;  // per sample
};

}  // namespace

MT_REGISTER_LAYER_KIND(LayerKind{
    proto::Layer::kMul,
    [](const proto::Layer&) -> std::unique_ptr<Layer> { return std::make_unique<Mul>(); },
    // One multiply per output element.
    [](const proto::Layer&, const std::vector<Shape>&, const Shape& out) -> int64_t {
      return static_cast<int64_t>(out.count());
    },
    // The channel scale of squeeze-and-excitation; the registry test's
    // gradient check covers both inputs.
    R"(layer { name: "squeeze" global_avgpool {} }
       layer { name: "probe" mul {} inputs: "input" inputs: "squeeze" })",
    {}});

}  // namespace mt
