// ONNX ops to mt layers, one function per op. Each checks every attribute
// that could change what the op computes and fails on what mt cannot do.
#include <cmath>
#include <functional>
#include <limits>
#include <map>

#include "model_io/onnx_importer.h"
#include "model_io/onnx_shape_ops.h"

namespace mt {
namespace {

using Translate = std::function<void(OnnxImporter&, const OnnxNode&)>;

float ScalarOf(const OnnxNode& n, const OnnxConstant& c, const std::string& role) {
  if (!c.is_float || c.count() != 1) n.Fail(role + " must be a FLOAT scalar");
  return c.floats[0];
}

// Two equal values from an ONNX list of per-axis values, `fallback` when absent.
int SquareAttr(const OnnxNode& n, const char* name, int fallback) {
  const std::vector<int64_t> v = n.Ints(name);
  if (v.empty()) return fallback;
  if (v.size() != 2 || v[0] != v[1] || v[0] < 1 || v[0] > (1 << 16))
    n.Fail(std::string("attribute '") + name + "' must be two equal positive sizes (square), got " +
           DimsText(v));
  return static_cast<int>(v[0]);
}

void CheckDilations(const OnnxNode& n) {
  for (int64_t d : n.Ints("dilations"))
    if (d != 1)
      n.Fail("dilations other than 1 are not supported, got " + DimsText(n.Ints("dilations")));
}

// pads [top, left, bottom, right] all equal (or auto_pad VALID): one padding.
int SymmetricPadding(const OnnxNode& n) {
  const std::string auto_pad = n.String("auto_pad", "NOTSET");
  const std::vector<int64_t> pads = n.Ints("pads");
  if (auto_pad == "VALID") {
    for (int64_t p : pads)
      if (p != 0) n.Fail("auto_pad VALID with non-zero pads");
    return 0;
  }
  if (auto_pad != "NOTSET")
    n.Fail("auto_pad " + auto_pad + " is not supported (only NOTSET with explicit pads, or VALID)");
  if (pads.empty()) return 0;
  if (pads.size() != 4 || pads[0] != pads[1] || pads[0] != pads[2] || pads[0] != pads[3] ||
      pads[0] < 0)
    n.Fail("only equal padding on all four sides is supported, got pads " + DimsText(pads));
  return static_cast<int>(pads[0]);
}

void Conv(OnnxImporter& im, const OnnxNode& n) {
  n.ExpectArity(2, 3);
  n.OnlyAttributes({"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"});
  const ImportedValue& x = im.SpatialValue(n, 0);
  const OnnxConstant& w = im.FloatConstant(n, 1, "weight", 4);
  if (w.dims[2] != w.dims[3])
    n.Fail("non-square kernels are not supported, weight " + DimsText(w.dims));
  const int kernel = SquareAttr(n, "kernel_shape", static_cast<int>(w.dims[2]));
  if (kernel != w.dims[2]) n.Fail("kernel_shape disagrees with the weight " + DimsText(w.dims));
  CheckDilations(n);
  const int stride = SquareAttr(n, "strides", 1);
  const int padding = SymmetricPadding(n);
  const int64_t group = n.Int("group", 1);
  if (group < 1 || group > w.dims[0]) n.Fail("bad group " + std::to_string(group));
  proto::Layer layer;
  auto* c = layer.mutable_conv();
  c->set_filters(static_cast<int>(w.dims[0]));
  c->set_kernel(kernel);
  if (stride != 1) c->set_stride(stride);
  if (padding != 0) c->set_padding(padding);
  if (group != 1) c->set_groups(static_cast<int>(group));
  std::vector<float> params = w.floats;
  if (n.Input(2).empty()) {
    c->set_no_bias(true);
  } else {
    const OnnxConstant& b = im.FloatConstant(n, 2, "bias", 1);
    if (b.dims[0] != w.dims[0])
      n.Fail("bias " + DimsText(b.dims) + " does not fit weight " + DimsText(w.dims));
    params.insert(params.end(), b.floats.begin(), b.floats.end());
  }
  im.AddLayer(n, std::move(layer), {x}, false, false, std::move(params));
}

// Our momentum m is ONNX's 1 - momentum, rounded to 1e-6 so that a round
// trip gives back 0.1, not the 0.10000002 that float arithmetic leaves.
float OurMomentum(float onnx_momentum) {
  return static_cast<float>(std::round((1.0 - static_cast<double>(onnx_momentum)) * 1e6) / 1e6);
}

void BatchNormalization(OnnxImporter& im, const OnnxNode& n) {
  n.ExpectArity(5, 5);
  n.OnlyAttributes({"epsilon", "momentum", "training_mode", "spatial"});
  if (n.Int("training_mode", 0) != 0)
    n.Fail("training_mode 1 is not supported (export in eval mode)");
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
    (i < 2 ? params : stats)
        .insert((i < 2 ? params : stats).end(), c.floats.begin(), c.floats.end());
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

void Relu(OnnxImporter& im, const OnnxNode& n) {
  n.ExpectArity(1, 1);
  n.OnlyAttributes({});
  const ImportedValue& x = im.Value(n, 0);
  proto::Layer layer;
  layer.mutable_relu();
  im.AddLayer(n, std::move(layer), {x}, x.flat, x.pooled);
}

// Clip(0, 6) is ReLU6 and Clip(0, inf) ReLU; the bounds are inputs since
// opset 11 (initializers or Constant nodes), attributes before.
void Clip(OnnxImporter& im, const OnnxNode& n) {
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

// MaxPool and AveragePool: a square window, no padding, floor rounding.
void Pool(OnnxImporter& im, const OnnxNode& n, bool max) {
  n.ExpectArity(1, 1);
  if (max)
    n.OnlyAttributes(
        {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order", "strides"});
  else
    n.OnlyAttributes(
        {"auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads", "strides"});
  const ImportedValue& x = im.SpatialValue(n, 0);
  if (!n.Has("kernel_shape")) n.Fail("has no kernel_shape");
  const int size = SquareAttr(n, "kernel_shape", 0);
  const int stride = SquareAttr(n, "strides", 1);
  CheckDilations(n);
  if (SymmetricPadding(n) != 0) n.Fail("padded pooling is not supported");
  if (n.Int("ceil_mode", 0) != 0) n.Fail("ceil_mode 1 is not supported");
  if (n.Int("storage_order", 0) != 0) n.Fail("storage_order 1 is not supported");
  if (size < 1) n.Fail("bad kernel_shape");
  proto::Layer layer;
  if (max) {
    layer.mutable_maxpool()->set_size(size);
    if (stride != size) layer.mutable_maxpool()->set_stride(stride);
  } else {
    layer.mutable_avgpool()->set_size(size);
    if (stride != size) layer.mutable_avgpool()->set_stride(stride);
  }
  im.AddLayer(n, std::move(layer), {x}, false, false);
}

void GlobalAveragePool(OnnxImporter& im, const OnnxNode& n) {
  n.ExpectArity(1, 1);
  n.OnlyAttributes({});
  const ImportedValue& x = im.SpatialValue(n, 0);
  proto::Layer layer;
  layer.mutable_global_avgpool();
  im.AddLayer(n, std::move(layer), {x}, true, true);
}

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

// Add of two graph tensors, or Sum of several: an add layer (skip connections).
void Sum(OnnxImporter& im, const OnnxNode& n) {
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

// Flatten from axis 1, or Reshape to [N, -1]: a flatten layer, or nothing
// after GlobalAveragePool, whose output is flat in mt already.
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

void FlattenOp(OnnxImporter& im, const OnnxNode& n) {
  n.ExpectArity(1, 1);
  n.OnlyAttributes({"axis"});
  if (n.Int("axis", 1) != 1)
    n.Fail("only axis 1 is supported, got " + std::to_string(n.Int("axis", 1)));
  Flatten(im, n, im.Value(n, 0));
}

void Reshape(OnnxImporter& im, const OnnxNode& n) {
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

// A dense layer from B (units x inputs when transposed, inputs x units else).
void Dense(OnnxImporter& im, const OnnxNode& n, const OnnxConstant& b, bool transposed,
           const OnnxConstant* bias) {
  const ImportedValue& x = im.Value(n, 0);
  if (!x.flat || x.pooled) n.Fail("its input must be [N, features] (Flatten first)");
  const int64_t units = transposed ? b.dims[0] : b.dims[1],
                inputs = transposed ? b.dims[1] : b.dims[0];
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

void Gemm(OnnxImporter& im, const OnnxNode& n) {
  n.ExpectArity(2, 3);
  n.OnlyAttributes({"alpha", "beta", "transA", "transB"});
  if (n.Float("alpha", 1) != 1 || n.Float("beta", 1) != 1)
    n.Fail("only alpha = beta = 1 is supported");
  if (n.Int("transA", 0) != 0) n.Fail("transA 1 is not supported");
  const OnnxConstant& b = im.FloatConstant(n, 1, "weight", 2);
  const OnnxConstant* c = n.Input(2).empty() ? nullptr : &im.FloatConstant(n, 2, "bias", -1);
  Dense(im, n, b, n.Int("transB", 0) != 0, c);
}

void MatMul(OnnxImporter& im, const OnnxNode& n) {
  n.ExpectArity(2, 2);
  n.OnlyAttributes({});
  Dense(im, n, im.FloatConstant(n, 1, "weight", 2), false, nullptr);
}

void Dropout(OnnxImporter& im, const OnnxNode& n) {
  n.ExpectArity(1, 3);
  n.OnlyAttributes({"ratio", "seed", "is_test"});
  const ImportedValue& x = im.Value(n, 0);
  float rate = n.Float("ratio", 0.5f);
  if (!n.Input(1).empty()) rate = ScalarOf(n, im.Constant(n, 1, "ratio"), "ratio");
  if (!n.Input(2).empty()) {
    const OnnxConstant& t = im.Constant(n, 2, "training_mode");
    if (t.count() != 1 || (t.is_float ? t.floats[0] != 0 : t.ints[0] != 0))
      n.Fail("training_mode true is not supported (export in eval mode)");
  }
  if (!(rate >= 0 && rate < 1)) n.Fail("ratio must be in [0, 1), got " + std::to_string(rate));
  proto::Layer layer;
  layer.mutable_dropout()->set_rate(rate);
  im.AddLayer(n, std::move(layer), {x}, x.flat, x.pooled);
}

// PyTorch 1.13 writes AvgPool2d as an all-zero Pad before AveragePool: a
// no-op. Real padding has no layer of its own in mt (convs pad themselves).
void Pad(OnnxImporter& im, const OnnxNode& n) {
  n.ExpectArity(1, 4);
  n.OnlyAttributes({"mode", "pads", "value"});
  const ImportedValue& x = im.Value(n, 0);
  std::vector<int64_t> pads = n.Ints("pads");
  if (!n.Input(1).empty()) pads = im.Constant(n, 1, "pads").ints;
  for (int64_t p : pads)
    if (p != 0)
      n.Fail("only an all-zero Pad (a no-op) is supported, got pads " + DimsText(pads) +
             "; pad inside the Conv instead");
  im.Alias(n, x);
}

void Identity(OnnxImporter& im, const OnnxNode& n) {
  n.ExpectArity(1, 1);
  n.OnlyAttributes({});
  if (im.IsConstant(n.Input(0))) {
    im.AddConstant(n.proto().output(0), im.Constant(n, 0, "input"));
    return;
  }
  im.Alias(n, im.Value(n, 0));
}

void Constant(OnnxImporter& im, const OnnxNode& n) {
  n.ExpectArity(0, 0);
  n.OnlyAttributes({"value", "value_float", "value_floats", "value_int", "value_ints"});
  OnnxConstant c;
  if (const onnx::TensorProto* t = n.Tensor("value")) {
    c = DecodeTensor(*t, "Constant node '" + n.proto().name() + "'");
  } else if (n.Has("value_float")) {
    c.is_float = true;
    c.floats = {n.Float("value_float", 0)};
  } else if (n.Has("value_int")) {
    c.ints = {n.Int("value_int", 0)};
  } else if (n.Has("value_ints")) {
    c.ints = n.Ints("value_ints");
    c.dims = {static_cast<int64_t>(c.ints.size())};
  } else if (n.Has("value_floats")) {
    n.Fail("value_floats is not supported");
  } else {
    n.Fail("has no value");
  }
  im.AddConstant(n.proto().output(0), std::move(c));
}

const std::map<std::string, Translate>& Translations() {
  static const std::map<std::string, Translate> table = {
      {"AveragePool", [](OnnxImporter& im, const OnnxNode& n) { Pool(im, n, false); }},
      {"BatchNormalization", BatchNormalization},
      {"Clip", Clip},
      {"Concat", ImportConcat},
      {"Constant", Constant},
      {"Conv", Conv},
      {"Dropout", Dropout},
      {"Flatten", FlattenOp},
      {"Gather", ImportGather},
      {"Gemm", Gemm},
      {"GlobalAveragePool", GlobalAveragePool},
      {"Identity", Identity},
      {"MatMul", MatMul},
      {"MaxPool", [](OnnxImporter& im, const OnnxNode& n) { Pool(im, n, true); }},
      {"Pad", Pad},
      {"Relu", Relu},
      {"Reshape", Reshape},
      {"Shape", ImportShape},
      {"Unsqueeze", ImportUnsqueeze},
      {"Add", Sum},
      {"Sum", Sum},
  };
  return table;
}

}  // namespace

void ImportOnnxNode(OnnxImporter& im, const OnnxNode& n) {
  const auto& table = Translations();
  const auto it = table.find(n.op());
  if (it == table.end()) {
    std::string known;
    for (const auto& entry : table) known += (known.empty() ? "" : ", ") + entry.first;
    n.Fail("op type '" + n.op() + "' is not supported (supported: " + known + ")");
  }
  it->second(im, n);
}

}  // namespace mt
