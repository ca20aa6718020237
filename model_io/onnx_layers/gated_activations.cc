// silu and hard_swish <-> the graphs PyTorch writes for them at opset 13:
// x * Sigmoid(x) and x * HardSigmoid(x) (alpha 1/6, beta 1/2). The Sigmoid
// or HardSigmoid imports as its own layer first (from its registry entry's
// ONNX data); the Mul after it turns that layer into silu or hard_swish.
#include <cmath>

#include "model_io/onnx_layer_translators.h"

namespace mt {
namespace {

bool SameValue(const ImportedValue& a, const ImportedValue& b) {
  return a.layer == b.layer && a.source == b.source;
}

// Whether `gate` is made by a layer computing sigmoid(x) or PyTorch's
// hardsigmoid(x) that only this Mul reads; returns the kind it makes with x.
proto::Layer::KindCase GatedKind(OnnxImporter& im, const OnnxNode& n, int gate_input,
                                 const ImportedValue& x) {
  const ImportedValue& gate = im.Value(n, gate_input);
  if (gate.layer < 0 || im.Readers(n.Input(gate_input)) != 1) return proto::Layer::KIND_NOT_SET;
  const std::vector<ImportedValue>& read = im.layer_inputs(gate.layer);
  if (read.size() != 1 || !SameValue(read[0], x)) return proto::Layer::KIND_NOT_SET;
  const proto::Layer& l = im.layer(gate.layer);
  if (l.has_sigmoid()) return proto::Layer::kSilu;
  const bool hard = l.has_hard_sigmoid() &&
                    std::fabs(l.hard_sigmoid().alpha() - 1.0f / 6) < 1e-6f &&
                    l.hard_sigmoid().beta() == 0.0f;  // 0: the default 0.5
  return hard ? proto::Layer::kHardSwish : proto::Layer::KIND_NOT_SET;
}

void ImportMul(OnnxImporter& im, const OnnxNode& n) {
  n.ExpectArity(2, 2);
  n.OnlyAttributes({});
  for (int gate = 0; gate < 2; ++gate) {
    if (im.IsConstant(n.Input(0)) || im.IsConstant(n.Input(1))) break;
    const ImportedValue& x = im.Value(n, 1 - gate);
    const proto::Layer::KindCase kind = GatedKind(im, n, gate, x);
    if (kind == proto::Layer::KIND_NOT_SET) continue;
    const ImportedValue made = im.Value(n, gate);
    proto::Layer& l = im.mutable_layer(made.layer);
    if (kind == proto::Layer::kSilu)
      l.mutable_silu();
    else
      l.mutable_hard_swish();
    return im.Alias(n, made);
  }
  // Any other product of two computed tensors is a mul layer.
  ImportMulLayer(im, n);
}

// The gate node takes the layer's name, so that importing it names the
// layer back the same.
void ExportGated(const OnnxLayerOut& o, const char* gate_op) {
  onnx::NodeProto& gate = o.w.Node(gate_op, o.name, {o.inputs[0]}, o.name + ".gate");
  if (std::string(gate_op) == "HardSigmoid") {
    SetFloat(gate, "alpha", 1.0f / 6);
    SetFloat(gate, "beta", 0.5f);
  }
  o.w.Node("Mul", o.name + ".mul", {o.inputs[0], o.name + ".gate"}, o.name);
}

}  // namespace

MT_REGISTER_ONNX_IMPORT("Mul", ImportMul);
MT_REGISTER_ONNX_EXPORT(proto::Layer::kSilu,
                        [](const OnnxLayerOut& o) { ExportGated(o, "Sigmoid"); });
// Opset 13 has no HardSwish (14 has); the importer reads either.
MT_REGISTER_ONNX_EXPORT(proto::Layer::kHardSwish,
                        [](const OnnxLayerOut& o) { ExportGated(o, "HardSigmoid"); });

}  // namespace mt
