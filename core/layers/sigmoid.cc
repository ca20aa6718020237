// sigmoid: 1 / (1 + exp(-x)), counted as 4 FLOPs per element (exp, add, divide, negate).
#include "core/layers/activation.h"
#include "core/layers/layer_registry.h"

namespace mt {

MT_REGISTER_LAYER_KIND(LayerKind{
    proto::Layer::kSigmoid,
    [](const proto::Layer& l) -> std::unique_ptr<Layer> {
      return std::make_unique<ActivationLayer>("sigmoid", kernels::Activation::kSigmoid,
                                               kernels::ActivationParams{});
    },
    [](const proto::Layer&, const std::vector<Shape>&, const Shape& out) -> int64_t {
      return 4 * static_cast<int64_t>(out.count());
    },
    R"(layer { name: "probe" sigmoid {} })", OnnxElementwise{"Sigmoid", {}}});

}  // namespace mt
