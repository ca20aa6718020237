// batchnorm <-> ONNX BatchNormalization in its inference form.
#include <cmath>

#include "model_io/onnx_layer_translators.h"
#include "model_io/onnx_pytorch_hints.h"

namespace mt {
namespace {

// Our momentum m is ONNX's 1 - momentum, rounded to 1e-6 so that a round
// trip gives back 0.1, not the 0.10000002 that float arithmetic leaves.
float OurMomentum(float onnx_momentum) {
  return static_cast<float>(std::round((1.0 - static_cast<double>(onnx_momentum)) * 1e6) / 1e6);
}

void ImportBatchNormalization(OnnxImporter& im, const OnnxNode& n) {
  // A train-mode export: the running statistics come out as outputs 1 and
  // 2 (opsets 14 and later with training_mode 1; before, up to 5 outputs).
  bool updates_stats = n.Int("training_mode", 0) != 0;
  for (int i = 1; i < n.proto().output_size(); ++i)
    updates_stats = updates_stats || !n.proto().output(i).empty();
  if (updates_stats)
    n.Fail(std::string("it updates its running statistics (outputs ") +
           std::to_string(n.proto().output_size()) + ", training_mode " +
           std::to_string(n.Int("training_mode", 0)) + "): " + kExportInEvalMode);
  n.ExpectArity(5, 5);
  n.OnlyAttributes({"epsilon", "momentum", "training_mode", "spatial"});
  if (n.Int("spatial", 1) != 1) n.Fail("spatial 0 is not supported");
  const ImportedValue& x = im.SpatialValue(n, 0);
  const char* roles[4] = {"scale", "bias", "mean", "variance"};
  std::vector<float> params, stats;
  int64_t channels = -1;
  for (int i = 0; i < 4; ++i) {
    const OnnxConstant& c = im.FloatConstant(n, i + 1, roles[i], 1);
    if (channels >= 0 && c.dims[0] != channels)
      n.Fail(std::string("its ") + roles[i] + " has " + std::to_string(c.dims[0]) +
             " values, its scale " + std::to_string(channels));
    channels = c.dims[0];
    if (i == 0) im.ChargeWeights(n, 2 * channels, 2 * channels);
    std::vector<float>& into = i < 2 ? params : stats;
    into.insert(into.end(), c.floats.begin(), c.floats.end());
  }
  const float epsilon = n.Float("epsilon", 1e-5f);
  const float momentum = OurMomentum(n.Float("momentum", 0.9f));
  if (!(epsilon > 0) || !(momentum > 0 && momentum <= 1))
    n.Fail("epsilon or momentum out of range");
  proto::Layer layer;
  auto* bn = layer.mutable_batchnorm();
  if (epsilon != 1e-5f) bn->set_epsilon(epsilon);
  if (momentum != 0.1f) bn->set_momentum(momentum);
  im.AddLayer(n, std::move(layer), {x}, false, false, std::move(params), std::move(stats));
}

void ExportBatchNorm(const OnnxLayerOut& o) {
  const int64_t ch = o.in[0];
  auto& n = o.w.Node("BatchNormalization", o.name,
                     {o.inputs[0], o.w.Weight(o.name + ".scale", {ch}, o.params),
                      o.w.Weight(o.name + ".shift", {ch}, o.params + ch),
                      o.w.Weight(o.name + ".running_mean", {ch}, o.stats),
                      o.w.Weight(o.name + ".running_var", {ch}, o.stats + ch)},
                     o.name);
  const auto& bn = o.layer.batchnorm();
  SetFloat(n, "epsilon", bn.epsilon() ? bn.epsilon() : 1e-5f);
  SetFloat(n, "momentum", 1.0f - (bn.momentum() ? bn.momentum() : 0.1f));
}

}  // namespace

MT_REGISTER_ONNX_IMPORT("BatchNormalization", ImportBatchNormalization);
MT_REGISTER_ONNX_EXPORT(proto::Layer::kBatchnorm, ExportBatchNorm);

}  // namespace mt
