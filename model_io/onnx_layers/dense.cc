// dense <-> ONNX Gemm (transB 1); Gemm without transB, and MatMul, import
// too (the bias of a MatMul comes from the Add after it, see add.cc).
#include "model_io/onnx_layer_translators.h"

namespace mt {
namespace {

// A dense layer from B (units x inputs when transposed, inputs x units else).
void Dense(OnnxImporter& im, const OnnxNode& n, const OnnxConstant& b, bool transposed,
           const OnnxConstant* bias) {
  const ImportedValue& x = im.Value(n, 0);
  if (!x.flat || x.pooled) n.Fail("its input must be [N, features] (Flatten first)");
  const int64_t units = transposed ? b.dims[0] : b.dims[1],
                inputs = transposed ? b.dims[1] : b.dims[0];
  im.ChargeWeights(n, units * inputs + units, 0);  // dims [2^26, 0] hold no weights
  std::vector<float> params(static_cast<size_t>(units * inputs + units), 0.0f);
  for (int64_t u = 0; u < units; ++u)
    for (int64_t i = 0; i < inputs; ++i)
      params[u * inputs + i] = transposed ? b.floats[u * inputs + i] : b.floats[i * units + u];
  if (bias) {
    const bool fits = bias->count() == static_cast<size_t>(units) &&
                      (bias->dims.size() == 1 || (bias->dims.size() == 2 && bias->dims[0] == 1));
    if (!fits)
      n.Fail("bias " + DimsText(bias->dims) + " does not fit " + std::to_string(units) + " units");
    std::copy(bias->floats.begin(), bias->floats.end(), params.end() - units);
  }
  proto::Layer layer;
  layer.mutable_dense()->set_units(static_cast<int>(units));
  const int index = im.AddLayer(n, std::move(layer), {x}, true, false, std::move(params));
  if (!bias) im.pending_bias().insert(index);
}

void ImportGemm(OnnxImporter& im, const OnnxNode& n) {
  n.ExpectArity(2, 3);
  n.OnlyAttributes({"alpha", "beta", "transA", "transB"});
  if (n.Float("alpha", 1) != 1 || n.Float("beta", 1) != 1)
    n.Fail("only alpha = beta = 1 is supported");
  if (n.Int("transA", 0) != 0) n.Fail("transA 1 is not supported");
  const OnnxConstant& b = im.FloatConstant(n, 1, "weight", 2);
  const OnnxConstant* c = n.Input(2).empty() ? nullptr : &im.FloatConstant(n, 2, "bias", -1);
  Dense(im, n, b, n.Int("transB", 0) != 0, c);
}

void ImportMatMul(OnnxImporter& im, const OnnxNode& n) {
  n.ExpectArity(2, 2);
  n.OnlyAttributes({});
  Dense(im, n, im.FloatConstant(n, 1, "weight", 2), false, nullptr);
}

void ExportDense(const OnnxLayerOut& o) {
  const int64_t units = o.layer.dense().units(), inputs = o.in.count();
  auto& n = o.w.Node("Gemm", o.name,
                     {o.inputs[0], o.w.Weight(o.name + ".weight", {units, inputs}, o.params),
                      o.w.Weight(o.name + ".bias", {units}, o.params + units * inputs)},
                     o.name);
  SetInt(n, "transB", 1);
}

}  // namespace

MT_REGISTER_ONNX_IMPORT("Gemm", ImportGemm);
MT_REGISTER_ONNX_IMPORT("MatMul", ImportMatMul);
MT_REGISTER_ONNX_EXPORT(proto::Layer::kDense, ExportDense);

}  // namespace mt
