// hard_swish: x * clamp(x / 6 + 1/2, 0, 1), 3 FLOPs per element. ONNX's HardSwish
// (opset 14) imports from the entry's data; opset 13's HardSigmoid + Mul is
// model_io/onnx_layers/gated_activations.cc's, which also exports it so.
#include "core/layers/activation.h"
#include "core/layers/layer_registry.h"

namespace mt {

MT_REGISTER_LAYER_KIND(LayerKind{
    proto::Layer::kHardSwish,
    [](const proto::Layer& l) -> std::unique_ptr<Layer> {
      return std::make_unique<ActivationLayer>("hard_swish", kernels::Activation::kHardSwish,
                                               kernels::ActivationParams{});
    },
    [](const proto::Layer&, const std::vector<Shape>&, const Shape& out) -> int64_t {
      return 3 * static_cast<int64_t>(out.count());
    },
    R"(layer { name: "probe" hard_swish {} })", OnnxElementwise{"HardSwish", {}}});

}  // namespace mt
