// The model a training run starts from and the one it leaves behind, shared
// by mthub and mtworker --standalone.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/model/fine_tuning.h"
#include "core/model/model.h"
#include "model_io/model_file.h"

namespace mt {

struct RunModel {
  proto::ModelSpec spec;
  // Weights to start from: --init-from's, else the model file's own (an
  // .onnx or .mtc --model), else none (initialised from the seed).
  std::optional<ModelWeights> initial;
  std::string initial_origin;
  std::vector<std::string> frozen;    // layer names (FrozenLayers)
  std::vector<std::string> warnings;  // --model's (LoadedModel::warnings)
  // What the final model file is named after: --model's file name without
  // its extension ("my_net" for my_net.onnx), or the preset's name. The
  // graph's own name says nothing to a user: PyTorch calls every export
  // "torch_jit".
  std::string label;
};

// Loads --model (preset, text spec, .onnx or .mtc) and --init-from, whose
// weights must fit --model's layers. Throws (OnnxError, CheckpointError,
// ModelSpecError, std::invalid_argument) naming the file and the layer.
RunModel LoadRunModel(const std::string& model, const FineTuning& tuning);

// Fits the model's outputs to the dataset's `classes`. A model without
// weights to start from (a preset or a spec) whose last layer is dense gets
// one output per class: returns a note saying so for the log. Otherwise
// more outputs than classes adds a warning (the extra ones only learn never
// to fire); fewer is refused when the data meets the model
// (CheckDataFitsModel). Returns "" when nothing changed.
// The model's outputs are named after `class_names` when there is one per
// output.
std::string FitOutputsToClasses(RunModel& run, int classes,
                                const std::vector<std::string>& class_names = {});

ModelWeights WeightsOf(const Model& model);
void SetWeights(Model& model, const ModelWeights& weights);

// Where a run keeps its final model: `export_path` when given; else
// final.onnx in `run_dir` (the checkpoint directory) when there is one; else
// STATE_DIR/models/NAME-YYYYmmdd-HHMMSS.onnx.
std::string FinalModelPath(const std::string& export_path, const std::string& run_dir,
                           const std::string& state_dir, const std::string& model_name);
// Writes `model` to `path` (by extension, model_file.h), creating its
// directory; throws std::runtime_error when it cannot.
SavedModel SaveFinalModel(const std::string& path, const proto::ModelSpec& spec, const Model& model,
                          const ModelMetadata& metadata = {});

}  // namespace mt
