// Flatten's registry entry (the layer is all in flatten.h).
#include "core/layers/flatten.h"
#include "core/layers/layer_registry.h"

namespace mt {

MT_REGISTER_LAYER_KIND(LayerKind{
    proto::Layer::kFlatten,
    [](const proto::Layer&) -> std::unique_ptr<Layer> { return std::make_unique<Flatten>(); },
    // A reshape: no arithmetic.
    [](const proto::Layer&, const std::vector<Shape>&, const Shape&) -> int64_t { return 0; },
    R"(layer { name: "probe" flatten {} })",
    {}});

}  // namespace mt
