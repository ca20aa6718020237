// flatten <-> ONNX Flatten (axis 1); Reshape to [N, features] imports as
// flatten too. After GlobalAveragePool, whose output is flat in mt
// already, either makes no layer.
#include "model_io/onnx_layer_translators.h"
#include "model_io/onnx_shape_ops.h"

namespace mt {
namespace {

void Flatten(OnnxImporter& im, const OnnxNode& n, const ImportedValue& x) {
  if (x.pooled) {
    ImportedValue flat = x;
    flat.pooled = false;
    return im.Alias(n, flat);
  }
  proto::Layer layer;
  layer.mutable_flatten();
  im.AddLayer(n, std::move(layer), {x}, true, false);
}

void ImportFlatten(OnnxImporter& im, const OnnxNode& n) {
  n.ExpectArity(1, 1);
  n.OnlyAttributes({"axis"});
  if (n.Int("axis", 1) != 1)
    n.Fail("only axis 1 is supported, got " + std::to_string(n.Int("axis", 1)));
  Flatten(im, n, im.Value(n, 0));
}

void ImportReshape(OnnxImporter& im, const OnnxNode& n) {
  n.ExpectArity(2, 2);
  n.OnlyAttributes({"allowzero"});
  const ImportedValue& x = im.Value(n, 0);
  const OnnxConstant& shape = im.Constant(n, 1, "shape");
  const std::vector<int64_t>& s = shape.ints;
  const bool to_flat =
      !shape.is_float && s.size() == 2 && s[1] == -1 && (s[0] >= 0 || s[0] == kBatchDim);
  const bool to_count = !shape.is_float && s.size() == 2 && s[0] == -1 && s[1] > 0;
  if (!to_flat && !to_count) {
    std::string text;
    for (int64_t d : s)
      text += (text.empty() ? "" : ", ") + (d == kBatchDim     ? "N"
                                            : d == kUnknownDim ? "?"
                                                               : std::to_string(d));
    n.Fail("only a reshape to [N, features] is supported ([0, -1], [N, -1] or [-1, C]), got [" +
           text + "]");
  }
  if (s[0] == 0 && n.Int("allowzero", 0) != 0) n.Fail("allowzero with a 0 dimension");
  if (to_count) im.ExpectCount(n, x.layer, s[1]);
  Flatten(im, n, x);
}

void ExportFlatten(const OnnxLayerOut& o) {
  SetInt(o.w.Node("Flatten", o.name, {o.inputs[0]}, o.name), "axis", 1);
}

}  // namespace

MT_REGISTER_ONNX_IMPORT("Flatten", ImportFlatten);
MT_REGISTER_ONNX_IMPORT("Reshape", ImportReshape);
MT_REGISTER_ONNX_EXPORT(proto::Layer::kFlatten, ExportFlatten);

}  // namespace mt
