// maxpool, avgpool and global_avgpool <-> ONNX MaxPool, AveragePool and
// GlobalAveragePool (+ Flatten, since mt's global pool is flat already);
// ReduceMean over H and W imports as global_avgpool too.
#include <algorithm>

#include "model_io/onnx_attributes.h"
#include "model_io/onnx_layer_translators.h"

namespace mt {
namespace {

// A square window, symmetric padding, floor rounding. PyTorch writes
// AvgPool2d(padding=p) with count_include_pad as a zero Pad before an
// unpadded AveragePool: that Pad's padding arrives with the value.
void ImportPool(OnnxImporter& im, const OnnxNode& n, bool max) {
  n.ExpectArity(1, 1);
  if (max)
    n.OnlyAttributes(
        {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order", "strides"});
  else
    n.OnlyAttributes(
        {"auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads", "strides"});
  const ImportedValue& x = im.PaddedValue(n, 0, !max);
  if (!n.Has("kernel_shape")) n.Fail("has no kernel_shape");
  const int size = SquareAttr(n, "kernel_shape", 0);
  const int stride = SquareAttr(n, "strides", 1);
  CheckDilations(n);
  int padding = SymmetricPadding(n);
  bool count_pad = n.Int("count_include_pad", 0) != 0;
  if (x.zero_pad > 0) {
    if (padding > 0) n.Fail("both pads and a Pad before it are not supported");
    padding = x.zero_pad;
    count_pad = true;  // the Pad's zeros are inputs of the windows
  }
  if (n.Int("ceil_mode", 0) != 0) n.Fail("ceil_mode 1 is not supported");
  if (n.Int("storage_order", 0) != 0) n.Fail("storage_order 1 is not supported");
  if (size < 1) n.Fail("bad kernel_shape");
  if (2 * padding > size)
    n.Fail("padding " + std::to_string(padding) + " over half the window " + std::to_string(size) +
           " is not supported");
  proto::Layer layer;
  if (max) {
    auto* p = layer.mutable_maxpool();
    p->set_size(size);
    if (stride != size) p->set_stride(stride);
    if (padding) p->set_padding(padding);
  } else {
    auto* p = layer.mutable_avgpool();
    p->set_size(size);
    if (stride != size) p->set_stride(stride);
    if (padding) p->set_padding(padding);
    if (padding && count_pad) p->set_count_include_pad(true);
  }
  ImportedValue in = x;
  in.zero_pad = 0;
  im.AddLayer(n, std::move(layer), {in}, false, false);
}

void ImportGlobalAveragePool(OnnxImporter& im, const OnnxNode& n) {
  n.ExpectArity(1, 1);
  n.OnlyAttributes({});
  const ImportedValue& x = im.SpatialValue(n, 0);
  proto::Layer layer;
  layer.mutable_global_avgpool();
  im.AddLayer(n, std::move(layer), {x}, true, true);
}

// x.mean((2, 3)): keepdims 1 is GlobalAveragePool's [N, C, 1, 1] (pooled),
// keepdims 0 the flat [N, C].
void ImportReduceMean(OnnxImporter& im, const OnnxNode& n) {
  n.ExpectArity(1, 2);  // axes: an attribute to opset 17, an input from 18
  n.OnlyAttributes({"axes", "keepdims", "noop_with_empty_axes"});
  const ImportedValue& x = im.SpatialValue(n, 0);
  std::vector<int64_t> axes = n.Input(1).empty() ? n.Ints("axes") : im.Constant(n, 1, "axes").ints;
  for (int64_t& a : axes)
    if (a < 0) a += 4;
  std::sort(axes.begin(), axes.end());
  if (axes != std::vector<int64_t>{2, 3})
    n.Fail("only a mean over H and W (axes [2, 3]) is supported, got axes " + DimsText(axes));
  proto::Layer layer;
  layer.mutable_global_avgpool();
  im.AddLayer(n, std::move(layer), {x}, true, n.Int("keepdims", 1) != 0);
}

onnx::NodeProto& ExportPool(const OnnxLayerOut& o, const char* op, int size, int stride,
                            int padding) {
  auto& n = o.w.Node(op, o.name, {o.inputs[0]}, o.name);
  SetInts(n, "kernel_shape", {size, size});
  SetInts(n, "strides", {stride ? stride : size, stride ? stride : size});
  if (padding) SetInts(n, "pads", {padding, padding, padding, padding});
  return n;
}

void ExportGlobalAvgPool(const OnnxLayerOut& o) {
  // ONNX keeps [N, C, 1, 1]; ours is flat.
  o.w.Node("GlobalAveragePool", o.name, {o.inputs[0]}, o.name + ".pooled");
  SetInt(o.w.Node("Flatten", o.name + ".flatten", {o.name + ".pooled"}, o.name), "axis", 1);
}

}  // namespace

MT_REGISTER_ONNX_IMPORT("MaxPool",
                        [](OnnxImporter& im, const OnnxNode& n) { ImportPool(im, n, true); });
MT_REGISTER_ONNX_IMPORT("AveragePool",
                        [](OnnxImporter& im, const OnnxNode& n) { ImportPool(im, n, false); });
MT_REGISTER_ONNX_IMPORT("GlobalAveragePool", ImportGlobalAveragePool);
MT_REGISTER_ONNX_IMPORT("ReduceMean", ImportReduceMean);
MT_REGISTER_ONNX_EXPORT(proto::Layer::kMaxpool, [](const OnnxLayerOut& o) {
  const auto& p = o.layer.maxpool();
  ExportPool(o, "MaxPool", p.size(), p.stride(), p.padding());
});
MT_REGISTER_ONNX_EXPORT(proto::Layer::kAvgpool, [](const OnnxLayerOut& o) {
  const auto& p = o.layer.avgpool();
  auto& n = ExportPool(o, "AveragePool", p.size(), p.stride(), p.padding());
  if (p.padding() && p.count_include_pad()) SetInt(n, "count_include_pad", 1);
});
MT_REGISTER_ONNX_EXPORT(proto::Layer::kGlobalAvgpool, ExportGlobalAvgPool);

}  // namespace mt
