// relu6 <-> ONNX Clip(0, 6); Clip(0, inf) imports as relu, whose ONNX op
// (Relu) is data in its registry entry.
#include <limits>

#include "model_io/onnx_attributes.h"
#include "model_io/onnx_layer_translators.h"

namespace mt {
namespace {

// The bounds are inputs since opset 11 (initializers or Constant nodes),
// attributes before.
void ImportClip(OnnxImporter& im, const OnnxNode& n) {
  n.ExpectArity(1, 3);
  n.OnlyAttributes({"min", "max"});
  const ImportedValue& x = im.Value(n, 0);
  const float inf = std::numeric_limits<float>::infinity();
  float lo = n.Float("min", -inf), hi = n.Float("max", inf);
  if (!n.Input(1).empty()) lo = ScalarOf(n, im.Constant(n, 1, "min"), "min");
  if (!n.Input(2).empty()) hi = ScalarOf(n, im.Constant(n, 2, "max"), "max");
  proto::Layer layer;
  if (lo == 0 && hi == 6)
    layer.mutable_relu6();
  else if (lo == 0 && hi == inf)
    layer.mutable_relu();
  else
    n.Fail("only Clip(0, 6) (ReLU6) and Clip(0, inf) (ReLU) are supported, got Clip(" +
           std::to_string(lo) + ", " + std::to_string(hi) + ")");
  im.AddLayer(n, std::move(layer), {x}, x.flat, x.pooled);
}

void ExportRelu6(const OnnxLayerOut& o) {
  o.w.Node("Clip", o.name,
           {o.inputs[0], o.w.Scalar(o.name + ".min", 0), o.w.Scalar(o.name + ".max", 6)}, o.name);
}

}  // namespace

MT_REGISTER_ONNX_IMPORT("Clip", ImportClip);
MT_REGISTER_ONNX_EXPORT(proto::Layer::kRelu6, ExportRelu6);

}  // namespace mt
