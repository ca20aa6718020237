// mul <-> ONNX Mul of two graph tensors: of one shape, or [N, C, H, W] times
// [N, C, 1, 1] (a squeeze-and-excitation gate; mt holds the gate flat, as
// GlobalAveragePool's output, so the export unsqueezes it back).
#include "model_io/onnx_layer_translators.h"

namespace mt {

void ImportMulLayer(OnnxImporter& im, const OnnxNode& n) {
  n.ExpectArity(2, 2);
  n.OnlyAttributes({});
  if (im.IsConstant(n.Input(0)) || im.IsConstant(n.Input(1)))
    n.Fail("multiplying by a constant is not supported (mt multiplies two computed tensors)");
  const ImportedValue& a = im.Value(n, 0);
  const ImportedValue& b = im.Value(n, 1);
  proto::Layer layer;
  layer.mutable_mul();
  if (a.flat == b.flat && a.pooled == b.pooled)
    return void(im.AddLayer(n, std::move(layer), {a, b}, a.flat, a.pooled));
  // The channel gate goes second.
  if (!a.flat && b.pooled) return void(im.AddLayer(n, std::move(layer), {a, b}, false, false));
  if (a.pooled && !b.flat) return void(im.AddLayer(n, std::move(layer), {b, a}, false, false));
  n.Fail("only a product of one shape, or [N, C, H, W] times [N, C, 1, 1], is supported");
}

namespace {

void ExportMul(const OnnxLayerOut& o) {
  const bool gate = o.in_shapes[0].rank() == 3 && o.in_shapes[1].rank() == 1;
  if (!gate) {
    o.w.Node("Mul", o.name, {o.inputs[0], o.inputs[1]}, o.name);
    return;
  }
  SetInts(o.w.Node("Constant", o.name + ".axes", {}, o.name + ".axes"), "value_ints", {2, 3});
  o.w.Node("Unsqueeze", o.name + ".unsqueeze", {o.inputs[1], o.name + ".axes"}, o.name + ".gate");
  o.w.Node("Mul", o.name, {o.inputs[0], o.name + ".gate"}, o.name);
}

}  // namespace

MT_REGISTER_ONNX_EXPORT(proto::Layer::kMul, ExportMul);

}  // namespace mt
