// The one place core/ touches protobuf: model specs in text format, to and
// from the layers that run them.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/data/dataset.h"
#include "core/model/model.h"
#include "model.pb.h"

namespace mt {

struct ModelSpecError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// `origin` names the text in error messages (a file path or a preset name).
proto::ModelSpec ParseModelSpec(const std::string& text, const std::string& origin);
// A preset name (lenet5, mentee) or a path to a text-format spec file.
proto::ModelSpec LoadModelSpec(const std::string& name_or_path);
std::string ModelSpecToText(const proto::ModelSpec& spec);
// The spec's input (channels, height, width).
Shape SpecInputShape(const proto::ModelSpec& spec);
// How its inputs are scaled from pixels (input_mean, input_std; default
// [-1, 1]). Throws ModelSpecError when they do not fit its channels.
PixelScaling SpecPixelScaling(const proto::ModelSpec& spec);

// Builds the layers and checks that the shapes fit; throws ModelSpecError
// naming the layer at fault. `backend` holds the parameters; `placement`
// (one backend per layer, or empty for all on `backend`) is where each runs;
// the layers named in `frozen` keep their parameters (Layer::frozen).
std::unique_ptr<Model> BuildModel(const proto::ModelSpec& spec, kernels::Backend& backend,
                                  std::vector<kernels::Backend*> placement = {},
                                  const std::vector<std::string>& frozen = {});

}  // namespace mt
