#include "core/layers/dense.h"

#include <stdexcept>

#include "core/layers/init.h"
#include "core/layers/layer_registry.h"
#include "core/layers/size_limits.h"

namespace mt {

Dense::Dense(int units) : units_(units) {
  if (units <= 0) throw std::invalid_argument("dense: units must be positive");
  CheckedElements({units}, "dense: the output");
}

Shape Dense::Setup(const Shape& in) {
  if (in.rank() != 1)
    throw std::invalid_argument("dense: needs a flat input (add a flatten layer), got " +
                                in.ToString());
  inputs_ = in[0];
  CheckedElements({units_, inputs_}, "dense: the weights");
  return Shape{units_};
}

size_t Dense::ParamCount() const { return static_cast<size_t>(units_) * inputs_ + units_; }

void Dense::BindParams(kernels::View params, kernels::View grads) {
  const size_t w = static_cast<size_t>(units_) * inputs_;
  weight_ = params.Slice(0, w);
  bias_ = params.Slice(w, units_);
  d_weight_ = grads.Slice(0, w);
  d_bias_ = grads.Slice(w, units_);
}

void Dense::InitParams(Rng& rng, float* host) const {
  UniformFanIn(rng, inputs_, host, ParamCount());
}

void Dense::Forward(const Tensor& in, const Tensor& out, const ForwardContext&) {
  const int n = in.batch();
  backend().Gemm(false, true, n, units_, inputs_, 1.0f, in.view, weight_, 0.0f, out.view);
  backend().AddBias(out.view, bias_, n, units_, 1);
}

void Dense::Backward(const Tensor& in, const Tensor&, const Tensor& d_out, const Tensor& d_in) {
  const int n = in.batch();
  if (!frozen()) {  // a frozen layer's gradients stay zero
    backend().Gemm(true, false, units_, inputs_, n, 1.0f, d_out.view, in.view, 0.0f, d_weight_);
    backend().BiasGrad(d_out.view, d_bias_, n, units_, 1);
  }
  if (!d_in.view.empty())
    backend().Gemm(false, false, n, inputs_, units_, 1.0f, d_out.view, weight_, 0.0f, d_in.view);
}

MT_REGISTER_LAYER_KIND(LayerKind{
    proto::Layer::kDense,
    [](const proto::Layer& l) -> std::unique_ptr<Layer> {
      return std::make_unique<Dense>(l.dense().units());
    },
    [](const proto::Layer&, const std::vector<Shape>& in, const Shape& out) -> int64_t {
      return 2 * static_cast<int64_t>(out.count()) * static_cast<int64_t>(in[0].count());
    },
    R"(layer { name: "flat" flatten {} } layer { name: "probe" dense { units: 5 } })",
    {}});

}  // namespace mt
