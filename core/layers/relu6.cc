// ReLU6's registry entry (the layer is all in relu6.h); ONNX's Clip(0, 6) is model_io's.
#include "core/layers/relu6.h"
#include "core/layers/layer_registry.h"

namespace mt {

MT_REGISTER_LAYER_KIND(LayerKind{
    proto::Layer::kRelu6,
    [](const proto::Layer&) -> std::unique_ptr<Layer> { return std::make_unique<ReLU6>(); },
    // Comparisons only.
    [](const proto::Layer&, const std::vector<Shape>&, const Shape&) -> int64_t { return 0; },
    R"(layer { name: "probe" relu6 {} })",
    {}});

}  // namespace mt
