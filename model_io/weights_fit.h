// Weights checked against the model a spec builds, so that weights of the
// wrong shape are an error naming the layer, never a model computing garbage.
#pragma once

#include <memory>
#include <string>

#include "core/model/model.h"
#include "model_io/model_weights.h"

namespace mt {

// Builds `spec` on a one-thread CPU backend (shapes checked, parameters
// unset). Throws ModelSpecError.
struct BuiltModel {
  std::unique_ptr<kernels::Backend> backend;
  std::unique_ptr<Model> model;
};
BuiltModel BuildOnCpu(const proto::ModelSpec& spec);

// Throws std::invalid_argument, naming `origin` and the first layer whose
// share of the parameters or running statistics does not fit, when the
// sizes differ from what `model` holds.
void CheckWeightsFit(const Model& model, const proto::ModelSpec& spec, const ModelWeights& weights,
                     const std::string& origin);

// Throws std::invalid_argument, naming `origin` and the first pair of layers
// that differ, unless `from`'s layers with weights have the same types and
// sizes, in the same order, as `into`'s: the weights of one then mean the
// same in the other (names may differ; an ONNX import names layers after
// the graph's nodes).
void CheckSameLayout(const Model& into, const proto::ModelSpec& into_spec, const Model& from,
                     const std::string& origin);

}  // namespace mt
