// concat <-> ONNX Concat along axis 1 (channels, or features of [N, F]).
// A Concat of constants is shape arithmetic (onnx_shape_ops.h) and makes
// no layer.
#include "model_io/onnx_layer_translators.h"
#include "model_io/onnx_shape_ops.h"

namespace mt {
namespace {

void ImportConcatOp(OnnxImporter& im, const OnnxNode& n) {
  bool constants = true;
  for (int i = 0; i < n.InputCount(); ++i) constants = constants && im.IsConstant(n.Input(i));
  if (constants) return ImportConcat(im, n);
  n.ExpectArity(2, 64);
  n.OnlyAttributes({"axis"});
  const int64_t axis = n.Int("axis", 0);
  std::vector<ImportedValue> inputs;
  for (int i = 0; i < n.InputCount(); ++i) {
    inputs.push_back(im.Value(n, i));
    if (inputs[i].flat != inputs[0].flat || inputs[i].pooled != inputs[0].pooled)
      n.Fail("its inputs differ in rank");
  }
  const bool spatial = !inputs[0].flat || inputs[0].pooled;  // rank 4 in ONNX
  if (axis != 1 && !(spatial && axis == -3) && !(!spatial && axis == -1))
    n.Fail("only concatenating along the channels (axis 1) is supported, got axis " +
           std::to_string(axis));
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

MT_REGISTER_ONNX_IMPORT("Concat", ImportConcatOp);
MT_REGISTER_ONNX_EXPORT(proto::Layer::kConcat, ExportConcat);

}  // namespace mt
