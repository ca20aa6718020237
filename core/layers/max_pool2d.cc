#include "core/layers/max_pool2d.h"

#include <stdexcept>

#include "core/layers/layer_registry.h"
#include "core/layers/size_limits.h"

namespace mt {

MaxPool2D::MaxPool2D(int size, int stride, int padding) {
  if (size <= 0 || stride <= 0)
    throw std::invalid_argument("maxpool: size and stride must be positive");
  if (size > kMaxWindow || stride > kMaxWindow)
    throw std::invalid_argument("maxpool: size and stride must be at most " +
                                std::to_string(kMaxWindow));
  if (padding < 0 || 2 * padding > size)
    throw std::invalid_argument("maxpool: padding must be in [0, size / 2], got " +
                                std::to_string(padding));
  geom_.size = size;
  geom_.stride = stride;
  geom_.pad = padding;
}

Shape MaxPool2D::Setup(const Shape& in) {
  if (in.rank() != 3)
    throw std::invalid_argument("maxpool: needs a CxHxW input, got " + in.ToString());
  geom_.channels = in[0];
  geom_.in_h = in[1];
  geom_.in_w = in[2];
  if (geom_.in_h + 2 * geom_.pad < geom_.size || geom_.in_w + 2 * geom_.pad < geom_.size)
    throw std::invalid_argument("maxpool: window " + std::to_string(geom_.size) +
                                " larger than the input " + in.ToString());
  return Shape{geom_.channels, geom_.out_h(), geom_.out_w()};
}

kernels::PoolGeometry MaxPool2D::GeometryFor(int batch) const {
  kernels::PoolGeometry g = geom_;
  g.batch = batch;
  return g;
}

void MaxPool2D::Reshape(int capacity) {
  const size_t need = static_cast<size_t>(capacity) * geom_.out_size();
  if (!argmax_ || argmax_->count() < need) argmax_ = backend().Allocate(need);
}

size_t MaxPool2D::StateBytes(int capacity) const {
  return capacity * geom_.out_size() * sizeof(int32_t);
}

void MaxPool2D::Forward(const Tensor& in, const Tensor& out, const ForwardContext&) {
  backend().MaxPoolForward(GeometryFor(in.batch()), in.view, out.view, kernels::WholeOf(*argmax_));
}

void MaxPool2D::Backward(const Tensor& in, const Tensor&, const Tensor& d_out, const Tensor& d_in) {
  if (d_in.view.empty()) return;
  backend().MaxPoolBackward(GeometryFor(in.batch()), d_out.view, kernels::WholeOf(*argmax_),
                            d_in.view);
}

MT_REGISTER_LAYER_KIND(LayerKind{
    proto::Layer::kMaxpool,
    [](const proto::Layer& l) -> std::unique_ptr<Layer> {
      const auto& p = l.maxpool();
      return std::make_unique<MaxPool2D>(p.size(), p.stride() ? p.stride() : p.size(), p.padding());
    },
    // Comparisons only.
    [](const proto::Layer&, const std::vector<Shape>&, const Shape&) -> int64_t { return 0; },
    R"(layer { name: "probe" maxpool { size: 3 stride: 2 padding: 1 } })",
    {}});

}  // namespace mt
