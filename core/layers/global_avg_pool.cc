// GlobalAvgPool's registry entry (the layer is all in global_avg_pool.h).
#include "core/layers/global_avg_pool.h"
#include "core/layers/layer_registry.h"

namespace mt {

MT_REGISTER_LAYER_KIND(LayerKind{
    proto::Layer::kGlobalAvgpool,
    [](const proto::Layer&) -> std::unique_ptr<Layer> { return std::make_unique<GlobalAvgPool>(); },
    // One add per input element.
    [](const proto::Layer&, const std::vector<Shape>& in, const Shape&) -> int64_t {
      return static_cast<int64_t>(in[0].count());
    },
    R"(layer { name: "probe" global_avgpool {} })",
    {}});

}  // namespace mt
