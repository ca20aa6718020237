// concat <-> ONNX Concat along axis 1 (channels of [N, C, H, W], features of
// [N, F]) of graph tensors. A Concat of constants is shape arithmetic
// (Shape -> Gather -> Concat -> Reshape), which onnx_shape_ops.cc folds.
#include "model_io/onnx_layer_translators.h"
#include "model_io/onnx_shape_ops.h"

namespace mt {
namespace {

void ImportConcatNode(OnnxImporter& im, const OnnxNode& n) {
  bool constants = true;
  for (int i = 0; i < n.InputCount(); ++i) constants = constants && im.IsConstant(n.Input(i));
  if (constants) return ImportConcat(im, n);
  n.ExpectArity(1, 64);
  n.OnlyAttributes({"axis"});
  std::vector<ImportedValue> inputs;
  for (int i = 0; i < n.InputCount(); ++i) {
    inputs.push_back(im.Value(n, i));
    if (inputs[i].flat != inputs[0].flat || inputs[i].pooled != inputs[0].pooled)
      n.Fail("its inputs differ in rank");
  }
  // ONNX's rank: a pooled value is still [N, C, 1, 1] there.
  const int rank = inputs[0].flat && !inputs[0].pooled ? 2 : 4;
  const int64_t axis = n.Int("axis", 0);
  if (axis != 1 && axis != 1 - rank)
    n.Fail("only axis 1 (channels, or features) is supported for computed tensors, got axis " +
           std::to_string(axis));
  if (inputs.size() == 1) return im.Alias(n, inputs[0]);
  proto::Layer layer;
  layer.mutable_concat();
  im.AddLayer(n, std::move(layer), inputs, inputs[0].flat, inputs[0].pooled);
}

void ExportConcat(const OnnxLayerOut& o) {
  onnx::NodeProto& n = o.w.Node("Concat", o.name, {}, o.name);
  for (const std::string& x : o.inputs) n.add_input(x);
  SetInt(n, "axis", 1);
}

}  // namespace

MT_REGISTER_ONNX_IMPORT("Concat", ImportConcatNode);
MT_REGISTER_ONNX_EXPORT(proto::Layer::kConcat, ExportConcat);

}  // namespace mt
