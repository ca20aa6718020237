// The ONNX ops that make no layer of their own (constants, identities, the
// shape arithmetic), and the dispatch of every node to its translation.
// Each checks every attribute that could change what the op computes and
// fails on what mt cannot do.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>

#include "model_io/onnx_attributes.h"
#include "model_io/onnx_importer.h"
#include "model_io/onnx_layer_translators.h"
#include "model_io/onnx_shape_ops.h"

namespace mt {
namespace {

using Translate = std::function<void(OnnxImporter&, const OnnxNode&)>;

// PyTorch 1.13 writes AvgPool2d as a Pad before AveragePool: all zero (a
// no-op) without padding, else zeros on each side of H and W, which the
// AveragePool after it takes as its own padding (ImportedValue::zero_pad).
// Other padding has no layer of its own in mt (convs pad themselves).
void Pad(OnnxImporter& im, const OnnxNode& n) {
  n.ExpectArity(1, 4);
  n.OnlyAttributes({"mode", "pads", "value"});
  const ImportedValue& x = im.Value(n, 0);
  std::vector<int64_t> pads = n.Ints("pads");
  if (!n.Input(1).empty()) pads = im.Constant(n, 1, "pads").ints;
  float value = n.Float("value", 0);
  if (n.InputCount() > 2 && !n.Input(2).empty())
    value = ScalarOf(n, im.Constant(n, 2, "value"), "value");
  const bool none = std::all_of(pads.begin(), pads.end(), [](int64_t p) { return p == 0; });
  if (none) return im.Alias(n, x);
  const int64_t p = pads.size() == 8 ? pads[2] : 0;
  const bool spatial = !x.flat && p > 0 && pads == std::vector<int64_t>{0, 0, p, p, 0, 0, p, p};
  if (!spatial || value != 0 || n.String("mode", "constant") != "constant")
    n.Fail(
        "only an all-zero Pad, or equal zero padding of H and W before an AveragePool, is "
        "supported, got pads " +
        DimsText(pads) + "; pad inside the Conv instead");
  ImportedValue padded = x;
  padded.zero_pad = static_cast<int>(pads[2]);
  im.Alias(n, padded);
}

void Identity(OnnxImporter& im, const OnnxNode& n) {
  n.ExpectArity(1, 1);
  n.OnlyAttributes({});
  // Shared, not copied: 3,000 Identity nodes on one 4 MB constant made 12 GB.
  if (im.IsConstant(n.Input(0))) return im.ShareConstant(n);
  im.Alias(n, im.Value(n, 0));
}

void Constant(OnnxImporter& im, const OnnxNode& n) {
  n.ExpectArity(0, 0);
  n.OnlyAttributes({"value", "value_float", "value_floats", "value_int", "value_ints"});
  OnnxConstant c;
  if (const onnx::TensorProto* t = n.Tensor("value")) {
    const std::string what = "Constant node '" + n.proto().name() + "'";
    im.ChargeConstant(n, TensorElements(*t, what), DecodedElementBytes(*t) == 4);
    c = DecodeTensor(*t, what);
  } else if (n.Has("value_float")) {
    c.is_float = true;
    c.floats = {n.Float("value_float", 0)};
  } else if (n.Has("value_int")) {
    c.ints = {n.Int("value_int", 0)};
  } else if (n.Has("value_ints")) {
    im.ChargeConstant(n, static_cast<int64_t>(n.Ints("value_ints").size()), false);
    c.ints = n.Ints("value_ints");
    c.dims = {static_cast<int64_t>(c.ints.size())};
  } else if (n.Has("value_floats")) {
    n.Fail("value_floats is not supported");
  } else {
    n.Fail("has no value");
  }
  im.AddConstant(n.proto().output(0), std::move(c));
}

// The ops that make no layer: constants, identities and the shape
// arithmetic; the layers' ops are in onnx_layers/ (onnx_layer_translators.h),
// and Concat there too (onnx_layers/concat.cc), which hands constants back to
// ImportConcat.
const std::map<std::string, Translate>& StructuralOps() {
  static const std::map<std::string, Translate> table = {
      {"Constant", Constant}, {"Gather", ImportGather}, {"Identity", Identity},
      {"Pad", Pad},           {"Shape", ImportShape},   {"Unsqueeze", ImportUnsqueeze},
  };
  return table;
}

}  // namespace

bool OnnxOpKnown(const std::string& op) {
  return FindOnnxImport(op) != nullptr || StructuralOps().count(op) > 0;
}

std::string SupportedLayerOpsText() {
  std::string known;
  for (const std::string& op : OnnxLayerOps()) known += (known.empty() ? "" : ", ") + op;
  return known;
}

void ImportOnnxNode(OnnxImporter& im, const OnnxNode& n) {
  if (const OnnxImportFn layer = FindOnnxImport(n.op())) return layer(im, n);
  const auto it = StructuralOps().find(n.op());
  if (it == StructuralOps().end())
    n.Fail("op type '" + n.op() +
           "' is not supported (supported as layers that train: " + SupportedLayerOpsText() + ")");
  it->second(im, n);
}

}  // namespace mt
