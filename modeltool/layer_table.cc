#include "modeltool/layer_table.h"

namespace mt {
namespace {

int64_t Flops(const proto::Layer& l, const std::vector<Shape>& in, const Shape& out) {
  const int64_t out_count = static_cast<int64_t>(out.count());
  const int64_t in_count = static_cast<int64_t>(in[0].count());
  switch (l.kind_case()) {
    case proto::Layer::kConv: {
      const int64_t groups = l.conv().groups() ? l.conv().groups() : 1, k = l.conv().kernel();
      return 2 * out_count * (in[0][0] / groups) * k * k;
    }
    case proto::Layer::kDense: return 2 * out_count * in_count;
    case proto::Layer::kBatchnorm: return 2 * out_count;
    case proto::Layer::kAvgpool: {
      const int64_t size = l.avgpool().size();
      return out_count * size * size;
    }
    case proto::Layer::kGlobalAvgpool: return in_count;
    case proto::Layer::kAdd: return out_count * static_cast<int64_t>(in.size() - 1);
    default: return 0;
  }
}

}  // namespace

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
    r.flops = Flops(spec.layer(static_cast<int>(i)), in, out);
    r.activations = static_cast<int64_t>(out.count());
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace mt
