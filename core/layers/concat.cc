// concat: inputs joined along the channels ([C_k][H][W] -> [sum C_k][H][W])
// or the features of flat inputs, by copies per sample (a memory operation
// every backend has, so it needs no op of its own).
#include <stdexcept>
#include <string>
#include <vector>

#include "core/layers/layer.h"
#include "core/layers/layer_registry.h"

namespace mt {
namespace {

class Concat : public Layer {
 public:
  const char* Type() const override { return "concat"; }
  kernels::OpSet Ops() const override { return {}; }
  bool TakesInputs(int count) const override { return count >= 2; }

  Shape Setup(const Shape& in_sample) override { return in_sample; }
  Shape SetupInputs(const std::vector<Shape>& in) override {
    sizes_.clear();
    int channels = 0;
    for (size_t k = 0; k < in.size(); ++k) {
      const bool fits = in[k].rank() == in[0].rank() &&
                        (in[k].rank() == 1 ||
                         (in[k].rank() == 3 && in[k][1] == in[0][1] && in[k][2] == in[0][2]));
      if (!fits)
        throw std::invalid_argument("concat: input " + std::to_string(k + 1) + " is " +
                                    in[k].ToString() + ", input 1 is " + in[0].ToString() +
                                    "; concatenated inputs differ only in channels");
      channels += in[k][0];
      sizes_.push_back(in[k].count());
    }
    out_size_ = 0;
    for (size_t s : sizes_) out_size_ += s;
    return in[0].rank() == 1 ? Shape{channels} : Shape{channels, in[0][1], in[0][2]};
  }

  void ForwardInputs(const std::vector<Tensor>& in, const Tensor& out,
                     const ForwardContext&) override {
    for (int b = 0; b < out.batch(); ++b) {
      size_t offset = 0;
      for (size_t k = 0; k < in.size(); ++k) {
        backend().Copy(in[k].view.Slice(b * sizes_[k], sizes_[k]),
                       out.view.Slice(b * out_size_ + offset, sizes_[k]));
        offset += sizes_[k];
      }
    }
  }
  void BackwardInputs(const std::vector<Tensor>&, const Tensor& out, const Tensor& d_out,
                      const std::vector<Tensor>& d_in) override {
    for (int b = 0; b < out.batch(); ++b) {
      size_t offset = 0;
      for (size_t k = 0; k < d_in.size(); ++k) {
        if (!d_in[k].view.empty())
          backend().Copy(d_out.view.Slice(b * out_size_ + offset, sizes_[k]),
                         d_in[k].view.Slice(b * sizes_[k], sizes_[k]));
        offset += sizes_[k];
      }
    }
  }

  // Only the multi-input forms are ever called (TakesInputs refuses one input).
  void Forward(const Tensor& in, const Tensor& out, const ForwardContext&) override {
    backend().Copy(in.view, out.view);
  }
  void Backward(const Tensor&, const Tensor&, const Tensor& d_out, const Tensor& d_in) override {
    if (!d_in.view.empty()) backend().Copy(d_out.view, d_in.view);
  }

 private:
  std::vector<size_t> sizes_;  // per input, floats per sample
  size_t out_size_ = 0;
};

}  // namespace

MT_REGISTER_LAYER_KIND(LayerKind{
    proto::Layer::kConcat,
    [](const proto::Layer&) -> std::unique_ptr<Layer> { return std::make_unique<Concat>(); },
    // Copies only.
    [](const proto::Layer&, const std::vector<Shape>&, const Shape&) -> int64_t { return 0; },
    R"(layer { name: "a" conv { filters: 3 kernel: 1 } }
       layer { name: "probe" concat {} inputs: "input" inputs: "a" })",
    {}});

}  // namespace mt
