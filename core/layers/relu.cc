// ReLU's registry entry (the layer is all in relu.h).
#include "core/layers/relu.h"
#include "core/layers/layer_registry.h"

namespace mt {

MT_REGISTER_LAYER_KIND(LayerKind{
    proto::Layer::kRelu,
    [](const proto::Layer&) -> std::unique_ptr<Layer> { return std::make_unique<ReLU>(); },
    // Comparisons only.
    [](const proto::Layer&, const std::vector<Shape>&, const Shape&) -> int64_t { return 0; },
    R"(layer { name: "probe" relu {} })", OnnxElementwise{"Relu", {}}});

}  // namespace mt
