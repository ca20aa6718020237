#include "model_io/model_file.h"

#include <stdexcept>

#include "core/checkpoint/checkpoint.h"
#include "core/model/model_spec.h"
#include "core/util/atomic_file.h"
#include "model_io/onnx_export.h"
#include "model_io/onnx_import.h"
#include "model_io/weights_fit.h"

namespace mt {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

LoadedModel FromCheckpoint(const std::string& path) {
  const Checkpoint c = LoadCheckpoint(path);
  LoadedModel m;
  m.origin = path;
  m.spec = ParseModelSpec(c.model_spec, path);
  m.weights = ModelWeights{c.weights, c.running_stats};
  // An older checkpoint of a model with batch norm carries no statistics:
  // refusing it is clearer than evaluating with made-up ones.
  const BuiltModel built = BuildOnCpu(m.spec);
  try {
    CheckWeightsFit(*built.model, m.spec, *m.weights, path);
  } catch (const std::invalid_argument& e) {
    throw CheckpointError(e.what());
  }
  return m;
}

}  // namespace

ModelFileKind ModelFileKindOf(const std::string& path) {
  if (EndsWith(path, ".onnx")) return ModelFileKind::kOnnx;
  if (EndsWith(path, ".mtc")) return ModelFileKind::kCheckpoint;
  return ModelFileKind::kTextSpec;
}

bool HasModelFileExtension(const std::string& path) {
  for (const char* ext : {".onnx", ".mtc", ".txt", ".pbtxt", ".spec"})
    if (EndsWith(path, ext)) return true;
  return false;
}

LoadedModel LoadModelFile(const std::string& path_or_preset) {
  switch (ModelFileKindOf(path_or_preset)) {
    case ModelFileKind::kOnnx: return ImportOnnx(path_or_preset);
    case ModelFileKind::kCheckpoint: return FromCheckpoint(path_or_preset);
    case ModelFileKind::kTextSpec: break;
  }
  LoadedModel m;
  m.spec = LoadModelSpec(path_or_preset);
  m.origin = path_or_preset;
  return m;
}

SavedModel SaveModelFile(const std::string& path, const proto::ModelSpec& spec,
                         const ModelWeights& weights, const ModelMetadata& metadata) {
  SavedModel saved{ModelFileKindOf(path)};
  switch (saved.kind) {
    case ModelFileKind::kOnnx: ExportOnnx(spec, weights, path, metadata); break;
    case ModelFileKind::kCheckpoint: {
      const BuiltModel built = BuildOnCpu(spec);
      CheckWeightsFit(*built.model, spec, weights, "the weights");
      Checkpoint c;
      c.model_spec = ModelSpecToText(spec);
      c.weights = weights.params;
      c.running_stats = weights.running_stats;
      SaveCheckpoint(path, c);
      break;
    }
    case ModelFileKind::kTextSpec:
      WriteFileAtomically(path, ModelSpecToText(spec));
      saved.weights_dropped = true;
      break;
  }
  return saved;
}

}  // namespace mt
