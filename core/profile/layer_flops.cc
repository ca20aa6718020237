#include "core/profile/layer_flops.h"

#include <stdexcept>

#include "core/layers/layer_registry.h"

namespace mt {

int64_t ForwardFlops(const proto::Layer& l, const std::vector<Shape>& in, const Shape& out) {
  const LayerKind& kind = LayerKindOf(l);
  if (!kind.forward_flops)
    throw std::logic_error("layer kind " + LayerKindName(l.kind_case()) + " states no FLOPs");
  return kind.forward_flops(l, in, out);
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
