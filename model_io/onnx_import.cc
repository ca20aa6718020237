#include "model_io/onnx_import.h"

#include "core/util/atomic_file.h"
#include "model_io/onnx_importer.h"

namespace mt {

LoadedModel ImportOnnx(const std::string& path) {
  std::string bytes;
  try {
    bytes = ReadFile(path);
  } catch (const std::runtime_error& e) {
    throw OnnxError(e.what());
  }
  return ImportOnnxBytes(bytes, path);
}

LoadedModel ImportOnnxBytes(const std::string& bytes, const std::string& origin) {
  onnx::ModelProto model;
  if (bytes.empty() || !model.ParseFromString(bytes))
    throw OnnxError(origin + ": not an ONNX model (unreadable protobuf: truncated or corrupt?)");
  return OnnxImporter(model, origin).Run();
}

}  // namespace mt
