// Fine-tuning a model: which layers keep their weights. Shared by mthub and
// mtworker --standalone (--freeze, --train-only).
#pragma once

#include <string>
#include <vector>

#include "model.pb.h"

namespace mt {

struct FineTuning {
  std::string init_from;                // weights from this file, fresh optimizer, step 0
  std::vector<std::string> freeze;      // these layers keep their weights
  std::vector<std::string> train_only;  // or: every other layer with weights does
};

// The layers to freeze: `freeze` as given, or with `train_only` every layer
// with parameters (conv, dense, batchnorm) that it does not name. Throws
// ModelSpecError naming an unknown layer and listing the model's, or when
// nothing would be left to train.
std::vector<std::string> FrozenLayers(const proto::ModelSpec& spec, const FineTuning& tuning);

}  // namespace mt
