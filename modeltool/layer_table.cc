#include "modeltool/layer_table.h"

#include "core/profile/layer_flops.h"

namespace mt {

std::vector<LayerRow> DescribeLayers(const proto::ModelSpec& spec, const Model& model) {
  std::vector<LayerRow> rows;
  for (size_t i = 0; i < model.layers().size(); ++i) {
    const Layer& layer = *model.layers()[i];
    LayerRow r;
    r.name = layer.name();
    r.type = layer.Type();
    std::vector<Shape> in;
    for (int v : model.layer_inputs(i)) {
      r.inputs.push_back(v < 0 ? "input" : model.layers()[v]->name());
      in.push_back(v < 0 ? model.input_shape() : model.layer_output_shape(v));
    }
    const Shape& out = model.layer_output_shape(i);
    r.output_shape = out.ToString();
    r.params = static_cast<int64_t>(layer.ParamCount());
    r.running_stats = static_cast<int64_t>(layer.RunningStatCount());
    r.flops = ForwardFlops(spec.layer(static_cast<int>(i)), in, out);
    r.activations = static_cast<int64_t>(out.count());
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace mt
