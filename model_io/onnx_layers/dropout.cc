// dropout <-> ONNX Dropout (an identity in inference, kept so that a round
// trip gives the same spec).
#include "model_io/onnx_attributes.h"
#include "model_io/onnx_layer_translators.h"
#include "model_io/onnx_pytorch_hints.h"

namespace mt {
namespace {

void ImportDropout(OnnxImporter& im, const OnnxNode& n) {
  n.ExpectArity(1, 3);
  n.OnlyAttributes({"ratio", "seed", "is_test"});
  const ImportedValue& x = im.Value(n, 0);
  float rate = n.Float("ratio", 0.5f);
  if (!n.Input(1).empty()) rate = ScalarOf(n, im.Constant(n, 1, "ratio"), "ratio");
  if (!n.Input(2).empty()) {
    const OnnxConstant& t = im.Constant(n, 2, "training_mode");
    if (t.count() != 1 || (t.is_float ? t.floats[0] != 0 : t.ints[0] != 0))
      n.Fail(std::string("its training_mode is true, so it drops: ") + kExportInEvalMode);
  }
  if (!(rate >= 0 && rate < 1)) n.Fail("ratio must be in [0, 1), got " + std::to_string(rate));
  proto::Layer layer;
  layer.mutable_dropout()->set_rate(rate);
  im.AddLayer(n, std::move(layer), {x}, x.flat, x.pooled);
}

void ExportDropout(const OnnxLayerOut& o) {
  o.w.Node("Dropout", o.name,
           {o.inputs[0], o.w.Scalar(o.name + ".ratio", o.layer.dropout().rate())}, o.name);
}

}  // namespace

MT_REGISTER_ONNX_IMPORT("Dropout", ImportDropout);
MT_REGISTER_ONNX_EXPORT(proto::Layer::kDropout, ExportDropout);

}  // namespace mt
