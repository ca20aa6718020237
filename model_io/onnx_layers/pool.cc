// maxpool, avgpool and global_avgpool <-> ONNX MaxPool, AveragePool and
// GlobalAveragePool (+ Flatten, since mt's global pool is flat already);
// ReduceMean over H and W imports as global_avgpool too.
#include <algorithm>

#include "model_io/onnx_attributes.h"
#include "model_io/onnx_layer_translators.h"

namespace mt {
namespace {

// A square window, no padding, floor rounding.
void ImportPool(OnnxImporter& im, const OnnxNode& n, bool max) {
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

void ImportGlobalAveragePool(OnnxImporter& im, const OnnxNode& n) {
  n.ExpectArity(1, 1);
  n.OnlyAttributes({});
  const ImportedValue& x = im.SpatialValue(n, 0);
  proto::Layer layer;
  layer.mutable_global_avgpool();
  im.AddLayer(n, std::move(layer), {x}, true, true);
}

// ReduceMean over H and W is a global average pool: keepdims 1 (the
// default) leaves ONNX's [N, C, 1, 1], which mt holds flat already.
void ImportReduceMean(OnnxImporter& im, const OnnxNode& n) {
  n.ExpectArity(1, 1);
  n.OnlyAttributes({"axes", "keepdims"});
  const ImportedValue& x = im.SpatialValue(n, 0);
  std::vector<int64_t> axes = n.Ints("axes");
  for (int64_t& a : axes)
    if (a < 0) a += 4;
  std::sort(axes.begin(), axes.end());
  if (axes != std::vector<int64_t>{2, 3})
    n.Fail("only a mean over H and W (axes [2, 3]) is supported, got axes " +
           DimsText(n.Ints("axes")));
  proto::Layer layer;
  layer.mutable_global_avgpool();
  im.AddLayer(n, std::move(layer), {x}, true, n.Int("keepdims", 1) != 0);
}

void ExportPool(const OnnxLayerOut& o, const char* op, int size, int stride) {
  auto& n = o.w.Node(op, o.name, {o.inputs[0]}, o.name);
  SetInts(n, "kernel_shape", {size, size});
  SetInts(n, "strides", {stride ? stride : size, stride ? stride : size});
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
  ExportPool(o, "MaxPool", o.layer.maxpool().size(), o.layer.maxpool().stride());
});
MT_REGISTER_ONNX_EXPORT(proto::Layer::kAvgpool, [](const OnnxLayerOut& o) {
  ExportPool(o, "AveragePool", o.layer.avgpool().size(), o.layer.avgpool().stride());
});
MT_REGISTER_ONNX_EXPORT(proto::Layer::kGlobalAvgpool, ExportGlobalAvgPool);

}  // namespace mt
