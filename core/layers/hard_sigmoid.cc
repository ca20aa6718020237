// hard_sigmoid: clamp(alpha x + beta, 0, 1), 2 FLOPs per element (the multiply-add).
#include "core/layers/activation.h"
#include "core/layers/layer_registry.h"

namespace mt {

MT_REGISTER_LAYER_KIND(LayerKind{
    proto::Layer::kHardSigmoid,
    [](const proto::Layer& l) -> std::unique_ptr<Layer> {
      return std::make_unique<ActivationLayer>(
          "hard_sigmoid", kernels::Activation::kHardSigmoid,
          kernels::ActivationParams{l.hard_sigmoid().alpha() ? l.hard_sigmoid().alpha() : 0.2f,
                                    l.hard_sigmoid().beta() ? l.hard_sigmoid().beta() : 0.5f});
    },
    [](const proto::Layer&, const std::vector<Shape>&, const Shape& out) -> int64_t {
      return 2 * static_cast<int64_t>(out.count());
    },
    R"(layer { name: "probe" hard_sigmoid { alpha: 0.25 beta: 0.375 } })",
    OnnxElementwise{"HardSigmoid", {{"alpha", "alpha", 0.2f}, {"beta", "beta", 0.5f}}}});

}  // namespace mt
