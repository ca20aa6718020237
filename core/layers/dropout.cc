#include "core/layers/dropout.h"

#include <stdexcept>
#include <string>
#include "core/layers/layer_registry.h"

namespace mt {

Dropout::Dropout(float rate) : rate_(rate) {
  if (!(rate >= 0.0f && rate < 1.0f))
    throw std::invalid_argument("dropout: rate must be in [0, 1), got " + std::to_string(rate));
}

Shape Dropout::Setup(const Shape& in) {
  per_sample_ = in.count();
  return in;
}

void Dropout::Reshape(int capacity) {
  const size_t need = static_cast<size_t>(capacity) * per_sample_;
  if (!mask_ || mask_->count() < need) mask_ = backend().Allocate(need);
}

void Dropout::Forward(const Tensor& in, const Tensor& out, const ForwardContext& ctx) {
  last_training_ = ctx.training && rate_ > 0.0f;
  if (!last_training_) {
    if (in.view.buffer != out.view.buffer || in.view.offset != out.view.offset)
      backend().Copy(in.view, out.view);
    return;
  }
  backend().DropoutForward(in.view, out.view, kernels::WholeOf(*mask_).Slice(0, in.count()), rate_,
                           ctx.seed);
}

void Dropout::Backward(const Tensor&, const Tensor&, const Tensor& d_out, const Tensor& d_in) {
  if (d_in.view.empty()) return;
  if (!last_training_) {
    if (d_in.view.buffer != d_out.view.buffer || d_in.view.offset != d_out.view.offset)
      backend().Copy(d_out.view, d_in.view);
    return;
  }
  backend().DropoutBackward(d_out.view, kernels::WholeOf(*mask_).Slice(0, d_out.count()), rate_,
                            d_in.view);
}

MT_REGISTER_LAYER_KIND(LayerKind{
    proto::Layer::kDropout,
    [](const proto::Layer& l) -> std::unique_ptr<Layer> {
      return std::make_unique<Dropout>(l.dropout().rate());
    },
    // A multiply per element, which the profile has always counted as free.
    [](const proto::Layer&, const std::vector<Shape>&, const Shape&) -> int64_t { return 0; },
    R"(layer { name: "probe" dropout { rate: 0.25 } })",
    {}});

}  // namespace mt
