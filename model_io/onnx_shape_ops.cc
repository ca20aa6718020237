#include "model_io/onnx_shape_ops.h"

namespace mt {
namespace {

const OnnxConstant& IntConstant(OnnxImporter& im, const OnnxNode& n, int i, const char* role) {
  const OnnxConstant& c = im.Constant(n, i, role);
  if (c.is_float) n.Fail(std::string("its ") + role + " must be an integer tensor");
  return c;
}

}  // namespace

void ImportShape(OnnxImporter& im, const OnnxNode& n) {
  n.ExpectArity(1, 1);
  n.OnlyAttributes({});
  const ImportedValue& x = im.Value(n, 0);
  OnnxConstant shape;
  // ONNX's rank: a pooled value is still [N, C, 1, 1] there.
  const int rank = x.flat && !x.pooled ? 2 : 4;
  im.ChargeConstant(n, rank, false);
  shape.ints.assign(rank, kUnknownDim);
  shape.ints[0] = kBatchDim;
  shape.dims = {rank};
  im.AddConstant(n.proto().output(0), std::move(shape));
}

void ImportGather(OnnxImporter& im, const OnnxNode& n) {
  n.ExpectArity(2, 2);
  n.OnlyAttributes({"axis"});
  if (n.Int("axis", 0) != 0) n.Fail("only axis 0 is supported");
  const OnnxConstant& data = IntConstant(im, n, 0, "data");
  const OnnxConstant& indices = IntConstant(im, n, 1, "indices");
  if (data.dims.size() != 1) n.Fail("only gathers from a 1-D shape are supported");
  im.ChargeConstant(n, static_cast<int64_t>(indices.ints.size()), false);
  OnnxConstant out;
  out.dims = indices.dims;
  const int64_t size = static_cast<int64_t>(data.ints.size());
  for (int64_t i : indices.ints) {
    if (i < -size || i >= size) n.Fail("index " + std::to_string(i) + " out of range");
    out.ints.push_back(data.ints[i < 0 ? i + size : i]);
  }
  im.AddConstant(n.proto().output(0), std::move(out));
}

void ImportUnsqueeze(OnnxImporter& im, const OnnxNode& n) {
  n.ExpectArity(1, 2);
  n.OnlyAttributes({"axes"});  // an attribute before opset 13, an input since
  if (!im.IsConstant(n.Input(0))) {
    // [N, C] -> [N, C, 1, 1]: a flat value as GlobalAveragePool leaves it.
    const ImportedValue& x = im.Value(n, 0);
    std::vector<int64_t> axes =
        n.Input(1).empty() ? n.Ints("axes") : IntConstant(im, n, 1, "axes").ints;
    if (!x.flat || x.pooled || axes != std::vector<int64_t>{2, 3})
      n.Fail(
          "only unsqueezing [N, C] to [N, C, 1, 1] (axes [2, 3]) is supported for a computed "
          "tensor");
    ImportedValue pooled = x;
    pooled.pooled = true;
    return im.Alias(n, pooled);
  }
  const OnnxConstant& data = IntConstant(im, n, 0, "data");
  const std::vector<int64_t> axes =
      n.Input(1).empty() ? n.Ints("axes") : IntConstant(im, n, 1, "axes").ints;
  if (data.dims.size() > 1 || axes.size() != 1 || (axes[0] != 0 && axes[0] != -1))
    n.Fail("only unsqueezing a scalar or 1-D shape constant is supported");
  im.ChargeConstant(n, static_cast<int64_t>(data.ints.size()), false);
  OnnxConstant out = data;
  if (data.dims.empty())
    out.dims = {1};
  else
    out.dims = axes[0] == 0 ? std::vector<int64_t>{1, data.dims[0]}
                            : std::vector<int64_t>{data.dims[0], 1};
  im.AddConstant(n.proto().output(0), std::move(out));
}

void ImportConcat(OnnxImporter& im, const OnnxNode& n) {
  n.ExpectArity(1, 16);
  n.OnlyAttributes({"axis"});
  if (n.Int("axis", 0) != 0) n.Fail("only axis 0 is supported");
  // Sized before anything is copied: 16-way Concats of Concats grow 16-fold
  // a level, and eight levels of a one-value constant asked for 34 GB.
  int64_t size = 0;
  for (int i = 0; i < n.InputCount(); ++i) {
    const OnnxConstant& part = IntConstant(im, n, i, "input");
    if (part.dims.size() != 1) n.Fail("only concatenating 1-D shape constants is supported");
    size += static_cast<int64_t>(part.ints.size());
  }
  im.ChargeConstant(n, size, false);
  OnnxConstant out;
  out.ints.reserve(static_cast<size_t>(size));
  for (int i = 0; i < n.InputCount(); ++i) {
    const OnnxConstant& part = im.Constant(n, i, "input");
    out.ints.insert(out.ints.end(), part.ints.begin(), part.ints.end());
  }
  out.dims = {static_cast<int64_t>(out.ints.size())};
  im.AddConstant(n.proto().output(0), std::move(out));
}

}  // namespace mt
