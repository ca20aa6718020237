// leaky_relu: x where x >= 0, else alpha x; 1 FLOP per element.
#include "core/layers/activation.h"
#include "core/layers/layer_registry.h"

namespace mt {

MT_REGISTER_LAYER_KIND(LayerKind{
    proto::Layer::kLeakyRelu,
    [](const proto::Layer& l) -> std::unique_ptr<Layer> {
      return std::make_unique<ActivationLayer>(
          "leaky_relu", kernels::Activation::kLeakyRelu,
          kernels::ActivationParams{l.leaky_relu().alpha() ? l.leaky_relu().alpha() : 0.01f, 0.0f});
    },
    [](const proto::Layer&, const std::vector<Shape>&, const Shape& out) -> int64_t {
      return 1 * static_cast<int64_t>(out.count());
    },
    R"(layer { name: "probe" leaky_relu { alpha: 0.125 } })",
    OnnxElementwise{"LeakyRelu", {{"alpha", "alpha", 0.01f}}}});

}  // namespace mt
