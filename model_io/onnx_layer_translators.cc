#include "model_io/onnx_layer_translators.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>

namespace mt {
namespace {

std::map<int, OnnxExport>& Exports() {
  static std::map<int, OnnxExport> exports;
  return exports;
}

std::map<std::string, OnnxImport>& Imports() {
  static std::map<std::string, OnnxImport> imports;
  return imports;
}

google::protobuf::Message& KindMessage(proto::Layer& layer, proto::Layer::KindCase kind) {
  const auto* field = proto::Layer::descriptor()->FindFieldByNumber(static_cast<int>(kind));
  return *layer.GetReflection()->MutableMessage(&layer, field);
}

const google::protobuf::FieldDescriptor& FloatField(const google::protobuf::Message& m,
                                                    const char* name) {
  const auto* field = m.GetDescriptor()->FindFieldByName(name);
  if (!field || field->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_FLOAT)
    throw std::logic_error(std::string("layer registry: ") + m.GetDescriptor()->name() +
                           " has no float field " + name);
  return *field;
}

// The one-to-one elementwise ops of LayerKind::onnx, both ways.
void ExportElementwise(const LayerKind& kind, const OnnxLayerOut& out) {
  onnx::NodeProto& n = out.w.Node(kind.onnx.op, out.name, {out.inputs[0]}, out.name);
  proto::Layer copy = out.layer;
  const google::protobuf::Message& m = KindMessage(copy, kind.kind);
  for (const OnnxFloatAttribute& a : kind.onnx.attributes) {
    const float v = m.GetReflection()->GetFloat(m, &FloatField(m, a.field));
    SetFloat(n, a.onnx_name, v != 0 ? v : a.fallback);
  }
}

void ImportElementwise(const LayerKind& kind, OnnxImporter& im, const OnnxNode& n) {
  n.ExpectArity(1, 1);
  std::vector<std::string> known;
  for (const OnnxFloatAttribute& a : kind.onnx.attributes) known.push_back(a.onnx_name);
  n.OnlyAttributes(known);
  const ImportedValue& x = im.Value(n, 0);
  proto::Layer layer;
  google::protobuf::Message& m = KindMessage(layer, kind.kind);
  for (const OnnxFloatAttribute& a : kind.onnx.attributes) {
    const float v = n.Float(a.onnx_name, a.fallback);
    if (v == 0) n.Fail(std::string("attribute '") + a.onnx_name + "' of 0 is not supported");
    if (v != a.fallback) m.GetReflection()->SetFloat(&m, &FloatField(m, a.field), v);
  }
  im.AddLayer(n, std::move(layer), {x}, x.flat, x.pooled);
}

const LayerKind* ElementwiseKind(const std::string& op) {
  for (const LayerKind* kind : LayerKinds())
    if (kind->onnx.op && op == kind->onnx.op) return kind;
  return nullptr;
}

}  // namespace

bool RegisterOnnxExport(proto::Layer::KindCase kind, OnnxExport exporter) {
  if (!Exports().emplace(static_cast<int>(kind), exporter).second) {
    std::fprintf(stderr, "mt: ONNX export of %s registered twice\n", LayerKindName(kind).c_str());
    std::abort();
  }
  return true;
}

bool RegisterOnnxImport(const char* op, OnnxImport translation) {
  if (!Imports().emplace(op, translation).second) {
    std::fprintf(stderr, "mt: ONNX import of %s registered twice\n", op);
    std::abort();
  }
  return true;
}

OnnxExportFn FindOnnxExport(proto::Layer::KindCase kind) {
  const auto it = Exports().find(static_cast<int>(kind));
  if (it != Exports().end()) return it->second;
  const LayerKind* entry = FindLayerKind(kind);
  if (entry && entry->onnx.op)
    return [entry](const OnnxLayerOut& out) { ExportElementwise(*entry, out); };
  return nullptr;
}

OnnxImportFn FindOnnxImport(const std::string& op) {
  const auto it = Imports().find(op);
  if (it != Imports().end()) return it->second;
  if (const LayerKind* kind = ElementwiseKind(op))
    return [kind](OnnxImporter& im, const OnnxNode& n) { ImportElementwise(*kind, im, n); };
  return nullptr;
}

std::vector<std::string> OnnxLayerOps() {
  std::vector<std::string> ops;
  for (const auto& entry : Imports()) ops.push_back(entry.first);
  for (const LayerKind* kind : LayerKinds())
    if (kind->onnx.op && !Imports().count(kind->onnx.op)) ops.push_back(kind->onnx.op);
  std::sort(ops.begin(), ops.end());
  return ops;
}

}  // namespace mt
