// The ONNX side of the layer registry (core/layers/layer_registry.h), which
// core/ cannot hold since it knows no ONNX: per layer kind an exporter, and
// per ONNX op an import translation, each registered by the kind's file in
// model_io/onnx_layers/. A kind whose registry entry names a one-to-one
// elementwise ONNX op (LayerKind::onnx) needs neither: onnx_elementwise.cc
// translates it both ways from that data.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/layers/layer_registry.h"
#include "core/tensor/shape.h"
#include "model_io/onnx_graph_writer.h"
#include "model_io/onnx_importer.h"

namespace mt {

// One layer to write: its nodes read `inputs` and the last writes `name`.
struct OnnxLayerOut {
  GraphWriter& w;
  const proto::Layer& layer;
  const std::string& name;
  const std::vector<std::string>& inputs;
  const Shape& in;                      // its first input's per-sample shape
  const float* params;                  // its ParamCount() values
  const float* stats;                   // its RunningStatCount() values
  const std::vector<Shape>& in_shapes;  // every input's per-sample shape
};
using OnnxExport = void (*)(const OnnxLayerOut& out);
using OnnxImport = void (*)(OnnxImporter& im, const OnnxNode& n);
using OnnxExportFn = std::function<void(const OnnxLayerOut&)>;
using OnnxImportFn = std::function<void(OnnxImporter&, const OnnxNode&)>;

// ONNX Mul of two computed tensors as a mul layer (onnx_layers/mul.cc),
// for a Mul translation that first looks for a pattern of its own.
void ImportMulLayer(OnnxImporter& im, const OnnxNode& n);

bool RegisterOnnxExport(proto::Layer::KindCase kind, OnnxExport exporter);
bool RegisterOnnxImport(const char* op, OnnxImport translation);

// The kind's exporter (its own or the elementwise one); null when it has none.
OnnxExportFn FindOnnxExport(proto::Layer::KindCase kind);
// The op's translation to layers; null when no kind imports it.
OnnxImportFn FindOnnxImport(const std::string& op);
// The ONNX ops that translate to layers, sorted.
std::vector<std::string> OnnxLayerOps();

#define MT_ONNX_CONCAT2(a, b) a##b
#define MT_ONNX_CONCAT(a, b) MT_ONNX_CONCAT2(a, b)
// At namespace scope in a file of model_io/onnx_layers/ (linked whole).
#define MT_REGISTER_ONNX_EXPORT(kind, fn)                                           \
  [[maybe_unused]] static const bool MT_ONNX_CONCAT(mt_onnx_export_, __COUNTER__) = \
      ::mt::RegisterOnnxExport(kind, fn)
#define MT_REGISTER_ONNX_IMPORT(op, fn)                                             \
  [[maybe_unused]] static const bool MT_ONNX_CONCAT(mt_onnx_import_, __COUNTER__) = \
      ::mt::RegisterOnnxImport(op, fn)

}  // namespace mt
