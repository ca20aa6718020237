#include "core/layers/conv2d.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "core/layers/init.h"
#include "core/layers/layer_registry.h"
#include "core/layers/size_limits.h"

namespace mt {

Conv2D::Conv2D(int filters, int kernel, int stride, int padding, int groups, bool bias)
    : has_bias_(bias) {
  if (filters <= 0 || kernel <= 0 || stride <= 0 || padding < 0 || groups <= 0)
    throw std::invalid_argument(
        "conv: filters, kernel, stride and groups must be positive, padding >= 0 (got filters " +
        std::to_string(filters) + ", kernel " + std::to_string(kernel) + ", stride " +
        std::to_string(stride) + ", padding " + std::to_string(padding) + ", groups " +
        std::to_string(groups) + ")");
  if (filters % groups != 0)
    throw std::invalid_argument("conv: filters " + std::to_string(filters) +
                                " do not divide into " + std::to_string(groups) + " groups");
  if (kernel > kMaxWindow || stride > kMaxWindow || padding > kMaxWindow)
    throw std::invalid_argument("conv: kernel, stride and padding must be at most " +
                                std::to_string(kMaxWindow));
  geom_.out_c = filters;
  geom_.kernel = kernel;
  geom_.stride = stride;
  geom_.pad = padding;
  geom_.groups = groups;
}

Shape Conv2D::Setup(const Shape& in) {
  if (in.rank() != 3)
    throw std::invalid_argument("conv: needs a CxHxW input, got " + in.ToString());
  geom_.in_c = in[0];
  geom_.in_h = in[1];
  geom_.in_w = in[2];
  if (geom_.in_c % geom_.groups != 0)
    throw std::invalid_argument("conv: " + std::to_string(geom_.in_c) +
                                " input channels do not divide into " +
                                std::to_string(geom_.groups) + " groups");
  if (geom_.in_h + 2 * geom_.pad < geom_.kernel || geom_.in_w + 2 * geom_.pad < geom_.kernel)
    throw std::invalid_argument("conv: kernel " + std::to_string(geom_.kernel) +
                                " larger than the padded input " + in.ToString());
  // In 64 bits before any int product is formed: output, weights and the
  // im2col workspace per sample.
  const int64_t oh = (int64_t{geom_.in_h} + 2 * geom_.pad - geom_.kernel) / geom_.stride + 1;
  const int64_t ow = (int64_t{geom_.in_w} + 2 * geom_.pad - geom_.kernel) / geom_.stride + 1;
  CheckedElements({geom_.out_c, oh, ow}, "conv: the output");
  const int64_t group_in = geom_.group_in_c();
  CheckedElements({geom_.out_c, group_in, geom_.kernel, geom_.kernel}, "conv: the weights");
  CheckedElements({geom_.in_c, geom_.kernel, geom_.kernel, oh, ow}, "conv: the workspace");
  return Shape{geom_.out_c, geom_.out_h(), geom_.out_w()};
}

size_t Conv2D::ParamCount() const { return geom_.weight_count() + (has_bias_ ? geom_.out_c : 0); }

void Conv2D::BindParams(kernels::View params, kernels::View grads) {
  const size_t w = geom_.weight_count();
  weight_ = params.Slice(0, w);
  d_weight_ = grads.Slice(0, w);
  if (has_bias_) {
    bias_ = params.Slice(w, geom_.out_c);
    d_bias_ = grads.Slice(w, geom_.out_c);
  }
}

// fan_in = patch() = in_c / groups * k * k: the inputs one output reads.
void Conv2D::InitParams(Rng& rng, float* host) const {
  UniformFanIn(rng, geom_.patch(), host, ParamCount());
}

kernels::ConvGeometry Conv2D::GeometryFor(int batch) const {
  kernels::ConvGeometry g = geom_;
  g.batch = batch;
  return g;
}

size_t Conv2D::WorkspaceFloats(int capacity) const {
  return backend().ConvWorkspaceCount(GeometryFor(capacity));
}

void Conv2D::Forward(const Tensor& in, const Tensor& out, const ForwardContext&) {
  backend().Conv2dForward(GeometryFor(in.batch()), in.view, weight_, bias_, out.view, workspace_);
}

// A frozen layer passes no weight gradient, so the backend computes only the
// input gradient (and skips even that when it is not needed either).
void Conv2D::Backward(const Tensor& in, const Tensor&, const Tensor& d_out, const Tensor& d_in) {
  if (frozen() && d_in.view.empty()) return;
  backend().Conv2dBackward(GeometryFor(in.batch()), in.view, weight_, d_out.view, d_in.view,
                           frozen() ? kernels::View{} : d_weight_,
                           frozen() ? kernels::View{} : d_bias_, workspace_);
}

namespace {

std::unique_ptr<Layer> MakeConv2D(const proto::Layer& l) {
  const auto& c = l.conv();
  return std::make_unique<Conv2D>(c.filters(), c.kernel(), c.stride() ? c.stride() : 1, c.padding(),
                                  c.groups() ? c.groups() : 1, !c.no_bias());
}

int64_t Conv2DFlops(const proto::Layer& l, const std::vector<Shape>& in, const Shape& out) {
  const int64_t groups = l.conv().groups() ? l.conv().groups() : 1, k = l.conv().kernel();
  return 2 * static_cast<int64_t>(out.count()) * (in[0][0] / groups) * k * k;
}

}  // namespace

MT_REGISTER_LAYER_KIND(LayerKind{
    proto::Layer::kConv,
    MakeConv2D,
    Conv2DFlops,
    R"(layer { name: "probe" conv { filters: 4 kernel: 3 stride: 2 padding: 1 groups: 2 } })",
    {}});

}  // namespace mt
