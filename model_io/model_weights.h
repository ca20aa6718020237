// A model as files carry it: the spec, and the weights when the file has
// them (an ONNX model or a checkpoint does, a text spec does not).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model.pb.h"

namespace mt {

// The model's two host-side buffers, in its own layout (core/model/model.h):
// the parameters, layer by layer, and batch norm's running statistics.
struct ModelWeights {
  std::vector<float> params;
  std::vector<float> running_stats;
};

// Key-value notes an exported ONNX file carries beyond the model (its
// metadata_props), e.g. the training run's summary as mt.training.
using ModelMetadata = std::vector<std::pair<std::string, std::string>>;

struct LoadedModel {
  proto::ModelSpec spec;
  std::optional<ModelWeights> weights;  // absent for a text spec or a preset
  std::string origin;                   // the path or preset it came from
  // What a user should hear before training it (e.g. batch norm folded
  // into the convolutions by the exporter); the daemons log and report them.
  std::vector<std::string> warnings;
};

}  // namespace mt
