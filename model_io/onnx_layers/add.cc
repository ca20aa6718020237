// add <-> ONNX Add of two graph tensors, or Sum of several (skip
// connections). An Add of a constant is the bias of a MatMul before it.
#include "model_io/onnx_layer_translators.h"

namespace mt {
namespace {

// The bias of a dense layer made from MatMul (or Gemm without C), when the
// Add is the only reader of its output.
void AddBias(OnnxImporter& im, const OnnxNode& n, int value_input) {
  const ImportedValue& x = im.Value(n, value_input);
  const OnnxConstant& b = im.FloatConstant(n, 1 - value_input, "bias", -1);
  if (x.layer < 0 || !im.pending_bias().count(x.layer) || im.Readers(n.Input(value_input)) != 1)
    n.Fail("adding a constant is supported only as the bias of a MatMul or Gemm without one");
  const int units = im.layer(x.layer).dense().units();
  const bool fits = b.count() == static_cast<size_t>(units) &&
                    (b.dims.size() == 1 || (b.dims.size() == 2 && b.dims[0] == 1));
  if (!fits)
    n.Fail("bias " + DimsText(b.dims) + " does not fit " + std::to_string(units) + " units");
  std::vector<float>& params = im.params_of(x.layer);
  std::copy(b.floats.begin(), b.floats.end(), params.end() - units);
  im.pending_bias().erase(x.layer);
  im.Alias(n, x);
}

void ImportSum(OnnxImporter& im, const OnnxNode& n) {
  n.ExpectArity(n.op() == "Add" ? 2 : 1, n.op() == "Add" ? 2 : 64);
  n.OnlyAttributes({});
  if (n.op() == "Add" && im.IsConstant(n.Input(1))) return AddBias(im, n, 0);
  if (n.op() == "Add" && im.IsConstant(n.Input(0))) return AddBias(im, n, 1);
  std::vector<ImportedValue> inputs;
  for (int i = 0; i < n.InputCount(); ++i) {
    inputs.push_back(im.Value(n, i));
    if (inputs[i].flat != inputs[0].flat || inputs[i].pooled != inputs[0].pooled)
      n.Fail("its inputs differ in rank; mt adds tensors of one shape (no broadcasting)");
  }
  if (inputs.size() == 1) return im.Alias(n, inputs[0]);
  proto::Layer layer;
  layer.mutable_add();
  im.AddLayer(n, std::move(layer), inputs, inputs[0].flat, inputs[0].pooled);
}

void ExportAdd(const OnnxLayerOut& o) {
  onnx::NodeProto& n = o.w.Node(o.inputs.size() == 2 ? "Add" : "Sum", o.name, {}, o.name);
  for (const std::string& x : o.inputs) n.add_input(x);
}

}  // namespace

MT_REGISTER_ONNX_IMPORT("Add", ImportSum);
MT_REGISTER_ONNX_IMPORT("Sum", ImportSum);
MT_REGISTER_ONNX_EXPORT(proto::Layer::kAdd, ExportAdd);

}  // namespace mt
