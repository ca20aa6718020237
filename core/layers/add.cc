// Add's registry entry (the layer is all in add.h).
#include "core/layers/add.h"
#include "core/layers/layer_registry.h"

namespace mt {

MT_REGISTER_LAYER_KIND(LayerKind{
    proto::Layer::kAdd,
    [](const proto::Layer&) -> std::unique_ptr<Layer> { return std::make_unique<Add>(); },
    // One add per element for each input after the first.
    [](const proto::Layer&, const std::vector<Shape>& in, const Shape& out) -> int64_t {
      return static_cast<int64_t>(out.count()) * static_cast<int64_t>(in.size() - 1);
    },
    R"(layer { name: "probe" add {} inputs: "input" inputs: "input" })",
    {}});

}  // namespace mt
