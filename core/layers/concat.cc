// concat: its inputs side by side along the channels ([C_i][H][W], one H and
// W) or along the features (flat [F_i]): per sample, input k's values are one
// contiguous block of the output, so forward and backward are block copies.
#include <stdexcept>
#include <string>

#include "core/layers/layer_registry.h"

namespace mt {
namespace {

class Concat : public Layer {
 public:
  const char* Type() const override { return "concat"; }
  kernels::OpSet Ops() const override { return {kernels::Op::kCopyRows}; }
  bool TakesInputs(int count) const override { return count >= 2; }

  Shape Setup(const Shape& in_sample) override {
    throw std::invalid_argument("concat: needs two or more inputs");
  }
  Shape SetupInputs(const std::vector<Shape>& in) override {
    Shape out = in[0];
    blocks_.assign(1, static_cast<int>(in[0].count()));
    for (size_t k = 1; k < in.size(); ++k) {
      bool fits = in[k].rank() == out.rank();
      for (int d = 1; fits && d < out.rank(); ++d) fits = in[k][d] == out[d];
      if (!fits)
        throw std::invalid_argument("concat: input " + std::to_string(k + 1) + " is " +
                                    in[k].ToString() + ", input 1 is " + in[0].ToString() +
                                    "; only the channels (or features) may differ");
      out[0] += in[k][0];
      blocks_.push_back(static_cast<int>(in[k].count()));
    }
    out_block_ = static_cast<int>(out.count());
    return out;
  }

  void ForwardInputs(const std::vector<Tensor>& in, const Tensor& out,
                     const ForwardContext&) override {
    int offset = 0;
    for (size_t k = 0; k < in.size(); ++k) {
      backend().CopyRows(in[k].view, blocks_[k], 0, out.view, out_block_, offset, out.batch(),
                         blocks_[k]);
      offset += blocks_[k];
    }
  }
  void BackwardInputs(const std::vector<Tensor>&, const Tensor&, const Tensor& d_out,
                      const std::vector<Tensor>& d_in) override {
    int offset = 0;
    for (size_t k = 0; k < d_in.size(); ++k) {
      if (!d_in[k].view.empty())
        backend().CopyRows(d_out.view, out_block_, offset, d_in[k].view, blocks_[k], 0,
                           d_out.batch(), blocks_[k]);
      offset += blocks_[k];
    }
  }

  // Only the multi-input forms are ever called (TakesInputs refuses one input).
  void Forward(const Tensor&, const Tensor&, const ForwardContext&) override {
    throw std::logic_error("concat: needs two or more inputs");
  }
  void Backward(const Tensor&, const Tensor&, const Tensor&, const Tensor&) override {
    throw std::logic_error("concat: needs two or more inputs");
  }

 private:
  std::vector<int> blocks_;  // values per sample of each input
  int out_block_ = 0;
};

}  // namespace

MT_REGISTER_LAYER_KIND(LayerKind{
    proto::Layer::kConcat,
    [](const proto::Layer&) -> std::unique_ptr<Layer> { return std::make_unique<Concat>(); },
    // Copies only.
    [](const proto::Layer&, const std::vector<Shape>&, const Shape&) -> int64_t { return 0; },
    // SqueezeNet's Fire: a 1x1 and a 3x3 expand side by side.
    R"(layer { name: "expand1" conv { filters: 2 kernel: 1 } }
       layer { name: "expand3" conv { filters: 3 kernel: 3 padding: 1 } inputs: "input" }
       layer { name: "probe" concat {} inputs: "expand1" inputs: "expand3" })",
    {}});

}  // namespace mt
