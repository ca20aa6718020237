#include "core/profile/layer_flops.h"

#include <stdexcept>

namespace mt {

int64_t ForwardFlops(const proto::Layer& l, const std::vector<Shape>& in, const Shape& out) {
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

std::vector<int64_t> ForwardFlopsPerSample(const proto::ModelSpec& spec, const Model& model) {
  const size_t n = model.layers().size();
  if (static_cast<size_t>(spec.layer_size()) != n)
    throw std::invalid_argument("ForwardFlopsPerSample: the spec has " +
                                std::to_string(spec.layer_size()) + " layers, the model " +
                                std::to_string(n));
  std::vector<int64_t> flops(n);
  std::vector<Shape> in;
  for (size_t i = 0; i < n; ++i) {
    in.clear();
    for (int v : model.layer_inputs(i))
      in.push_back(v < 0 ? model.input_shape() : model.layer_output_shape(v));
    flops[i] = ForwardFlops(spec.layer(static_cast<int>(i)), in, model.layer_output_shape(i));
  }
  return flops;
}

std::vector<int64_t> BackwardFlopsPerSample(const Model& model,
                                            const std::vector<int64_t>& forward) {
  std::vector<int64_t> flops(forward.size(), 0);
  for (size_t i = 0; i < forward.size(); ++i) {
    if (!model.RunsBackward(i)) continue;
    const Layer& layer = *model.layers()[i];
    bool input_grad = false;
    for (int v : model.layer_inputs(i))
      input_grad = input_grad || (v >= 0 && model.RunsBackward(v));
    const bool weight_grad = layer.ParamCount() > 0 && !layer.frozen();
    flops[i] = forward[i] * (int64_t{input_grad} + int64_t{weight_grad});
  }
  return flops;
}

}  // namespace mt
