// silu: x * sigmoid(x), 5 FLOPs per element. ONNX has no op for it: PyTorch
// writes Sigmoid + Mul, model_io/onnx_layers/gated_activations.cc's both ways.
#include "core/layers/activation.h"
#include "core/layers/layer_registry.h"

namespace mt {

MT_REGISTER_LAYER_KIND(LayerKind{
    proto::Layer::kSilu,
    [](const proto::Layer& l) -> std::unique_ptr<Layer> {
      return std::make_unique<ActivationLayer>("silu", kernels::Activation::kSilu,
                                               kernels::ActivationParams{});
    },
    [](const proto::Layer&, const std::vector<Shape>&, const Shape& out) -> int64_t {
      return 5 * static_cast<int64_t>(out.count());
    },
    R"(layer { name: "probe" silu {} })",
    {}});

}  // namespace mt
