// Models in files, by extension: .onnx (ONNX, weights included), .mtc (an
// mt checkpoint: spec, weights, running statistics), anything else a text
// spec (or a preset name when loading), which carries no weights.
#pragma once

#include <string>

#include "model_io/model_weights.h"

namespace mt {

enum class ModelFileKind { kOnnx, kCheckpoint, kTextSpec };

// By extension: .onnx, .mtc, else a text spec (.txt, .pbtxt, .spec, a preset).
ModelFileKind ModelFileKindOf(const std::string& path);
// Whether `path` ends in one of the extensions above (.onnx, .mtc, .txt,
// .pbtxt, .spec): what a file to write must name.
bool HasModelFileExtension(const std::string& path);

// Throws OnnxError, CheckpointError or ModelSpecError naming the file.
LoadedModel LoadModelFile(const std::string& path_or_preset);

// What SaveModelFile kept.
struct SavedModel {
  ModelFileKind kind;
  bool weights_dropped = false;  // a text spec keeps only the spec
};
// A checkpoint is written at step 0 without optimizer state; its running
// statistics are the weights' own. Throws like LoadModelFile, or
// std::runtime_error when the file cannot be written.
// `metadata` goes into an ONNX file only (onnx_export.h).
SavedModel SaveModelFile(const std::string& path, const proto::ModelSpec& spec,
                         const ModelWeights& weights, const ModelMetadata& metadata = {});

}  // namespace mt
