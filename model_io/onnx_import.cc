#include "model_io/onnx_import.h"

#include <filesystem>
#include <system_error>

#include "core/util/atomic_file.h"
#include "model_io/onnx_import_budget.h"
#include "model_io/onnx_importer.h"
#include "model_io/onnx_wire_scan.h"

namespace mt {

LoadedModel ImportOnnx(const std::string& path, const OnnxImportLimits& limits) {
  std::string bytes;
  try {
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (!ec) CheckOnnxFileSize(path, static_cast<double>(size), limits);  // before reading it
    bytes = ReadFile(path);
  } catch (const std::runtime_error& e) {
    if (dynamic_cast<const OnnxError*>(&e)) throw;
    throw OnnxError(e.what());
  }
  return ImportOnnxBytes(bytes, path, limits);
}

LoadedModel ImportOnnxBytes(const std::string& bytes, const std::string& origin,
                            const OnnxImportLimits& limits) {
  CheckOnnxFileSize(origin, static_cast<double>(bytes.size()), limits);
  // Before the parse, which would build every node: a million cost 1.5 GB.
  const OnnxWireScan scan = ScanOnnxWire(bytes);
  onnx::ModelProto model;
  if (scan.readable) {
    CheckOnnxNodeCount(origin, scan.nodes, limits);
    CheckOnnxParsedBytes(origin, scan.parsed_bytes, limits);
  }
  if (bytes.empty() || !scan.readable || !model.ParseFromString(bytes))
    throw OnnxError(origin + ": not an ONNX model (unreadable protobuf: truncated or corrupt?)");
  LoadedModel loaded = OnnxImporter(model, origin, limits).Run();
  if (std::string folded = FoldedBatchNormWarning(model, origin); !folded.empty())
    loaded.warnings.push_back(std::move(folded));
  return loaded;
}

std::string FoldedBatchNormWarning(const onnx::ModelProto& model, const std::string& origin) {
  // torch.onnx.export in eval mode with constant folding (its default)
  // computes each conv's weights with its batch norm's and names them
  // "onnx::Conv_<n>"; exported with the batch norm kept they keep their
  // module's names ("features.0.weight"). Trained as it is, such a net
  // reached 0.50 where the same one with batch norm reached 0.79.
  int folded = 0;
  for (const onnx::NodeProto& n : model.graph().node()) {
    if (n.op_type() == "BatchNormalization") return "";
    if (n.op_type() == "Conv" && n.input_size() >= 3 && n.input(1).rfind("onnx::Conv_", 0) == 0)
      ++folded;
  }
  if (folded == 0) return "";
  return origin + ": batch norm looks folded into " + std::to_string(folded) +
         " convolution(s) (no BatchNormalization node; weights named onnx::Conv_*, as "
         "torch.onnx.export makes them in eval mode), so it trains worse than with batch norm "
         "kept: export with training=torch.onnx.TrainingMode.PRESERVE and "
         "do_constant_folding=False on the model in eval() to keep it.";
}

}  // namespace mt
