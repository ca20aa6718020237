// conv <-> ONNX Conv (square kernel, equal padding, no dilation).
#include <algorithm>

#include "model_io/onnx_attributes.h"
#include "model_io/onnx_layer_translators.h"

namespace mt {
namespace {

// A 1x1 convolution of a globally pooled [N, C, 1, 1] value (the squeeze
// and excitation of an SE block) is a dense layer on mt's flat [C]: the
// weight [F, C, 1, 1] is dense's [units][inputs] already.
void ImportPooledConv(OnnxImporter& im, const OnnxNode& n, const ImportedValue& x,
                      const OnnxConstant& w) {
  if (w.dims[2] != 1 || w.dims[3] != 1 || SquareAttr(n, "kernel_shape", 1) != 1 ||
      SymmetricPadding(n) != 0 || n.Int("group", 1) != 1)
    n.Fail(
        "on a globally pooled [N, C, 1, 1] input only a 1x1 convolution without padding or "
        "groups is supported");
  CheckDilations(n);
  im.ChargeWeights(n, static_cast<int64_t>(w.floats.size()) + w.dims[0], 0);
  std::vector<float> params = w.floats;
  params.resize(params.size() + static_cast<size_t>(w.dims[0]), 0.0f);
  if (!n.Input(2).empty()) {
    const OnnxConstant& b = im.FloatConstant(n, 2, "bias", 1);
    if (b.dims[0] != w.dims[0])
      n.Fail("bias " + DimsText(b.dims) + " does not fit weight " + DimsText(w.dims));
    std::copy(b.floats.begin(), b.floats.end(), params.end() - w.dims[0]);
  }
  proto::Layer layer;
  layer.mutable_dense()->set_units(static_cast<int>(w.dims[0]));
  im.AddLayer(n, std::move(layer), {x}, true, true, std::move(params));
}

void ImportConv(OnnxImporter& im, const OnnxNode& n) {
  n.ExpectArity(2, 3);
  n.OnlyAttributes({"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"});
  const OnnxConstant& w = im.FloatConstant(n, 1, "weight", 4);
  if (im.Value(n, 0).pooled) return ImportPooledConv(im, n, im.Value(n, 0), w);
  const ImportedValue& x = im.SpatialValue(n, 0);
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
  im.ChargeWeights(n, static_cast<int64_t>(w.floats.size()) + (n.Input(2).empty() ? 0 : w.dims[0]),
                   0);
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

void ExportConv(const OnnxLayerOut& o) {
  const auto& c = o.layer.conv();
  const int64_t groups = c.groups() ? c.groups() : 1, k = c.kernel(), f = c.filters();
  const std::vector<int64_t> dims = {f, o.in[0] / groups, k, k};
  const std::string weight = o.w.Weight(o.name + ".weight", dims, o.params);
  auto& n = c.no_bias()
                ? o.w.Node("Conv", o.name, {o.inputs[0], weight}, o.name)
                : o.w.Node("Conv", o.name,
                           {o.inputs[0], weight,
                            o.w.Weight(o.name + ".bias", {f}, o.params + f * dims[1] * k * k)},
                           o.name);
  SetInts(n, "kernel_shape", {k, k});
  const int64_t stride = c.stride() ? c.stride() : 1;
  SetInts(n, "strides", {stride, stride});
  SetInts(n, "pads", {c.padding(), c.padding(), c.padding(), c.padding()});
  SetInts(n, "dilations", {1, 1});
  SetInt(n, "group", groups);
}

}  // namespace

MT_REGISTER_ONNX_IMPORT("Conv", ImportConv);
MT_REGISTER_ONNX_EXPORT(proto::Layer::kConv, ExportConv);

}  // namespace mt
