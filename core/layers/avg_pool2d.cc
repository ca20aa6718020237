#include "core/layers/avg_pool2d.h"

#include <stdexcept>
#include <string>

#include "core/layers/layer_registry.h"
#include "core/layers/size_limits.h"

namespace mt {

AvgPool2D::AvgPool2D(int size, int stride, int padding, bool count_pad) {
  if (stride == 0) stride = size;
  if (size <= 0 || stride <= 0)
    throw std::invalid_argument("avgpool: size and stride must be positive");
  if (size > kMaxWindow || stride > kMaxWindow)
    throw std::invalid_argument("avgpool: size and stride must be at most " +
                                std::to_string(kMaxWindow));
  if (padding < 0 || 2 * padding > size)
    throw std::invalid_argument("avgpool: padding must be in [0, size / 2], got " +
                                std::to_string(padding));
  geom_.size = size;
  geom_.stride = stride;
  geom_.pad = padding;
  geom_.count_pad = count_pad;
}

Shape AvgPool2D::Setup(const Shape& in) {
  if (in.rank() != 3)
    throw std::invalid_argument("avgpool: needs a CxHxW input, got " + in.ToString());
  geom_.channels = in[0];
  geom_.in_h = in[1];
  geom_.in_w = in[2];
  if (geom_.in_h + 2 * geom_.pad < geom_.size || geom_.in_w + 2 * geom_.pad < geom_.size)
    throw std::invalid_argument("avgpool: window " + std::to_string(geom_.size) +
                                " larger than the input " + in.ToString());
  return Shape{geom_.channels, geom_.out_h(), geom_.out_w()};
}

kernels::PoolGeometry AvgPool2D::GeometryFor(int batch) const {
  kernels::PoolGeometry g = geom_;
  g.batch = batch;
  return g;
}

void AvgPool2D::Forward(const Tensor& in, const Tensor& out, const ForwardContext&) {
  backend().AvgPoolForward(GeometryFor(in.batch()), in.view, out.view);
}

void AvgPool2D::Backward(const Tensor& in, const Tensor&, const Tensor& d_out, const Tensor& d_in) {
  if (d_in.view.empty()) return;
  backend().AvgPoolBackward(GeometryFor(in.batch()), d_out.view, d_in.view);
}

MT_REGISTER_LAYER_KIND(LayerKind{
    proto::Layer::kAvgpool,
    [](const proto::Layer& l) -> std::unique_ptr<Layer> {
      const auto& p = l.avgpool();
      return std::make_unique<AvgPool2D>(p.size(), p.stride() ? p.stride() : p.size(), p.padding(),
                                         p.count_include_pad());
    },
    // One add per window element.
    [](const proto::Layer& l, const std::vector<Shape>&, const Shape& out) -> int64_t {
      const int64_t size = l.avgpool().size();
      return static_cast<int64_t>(out.count()) * size * size;
    },
    R"(layer { name: "probe" avgpool { size: 3 stride: 1 padding: 1 } })",
    {}});

}  // namespace mt
