#pragma once

#include <cstdint>
#include <vector>

#include "core/data/dataset.h"
#include "core/model/model.h"

namespace mt {

struct EvalResult {
  double accuracy = 0;
  double mean_loss = 0;
  int64_t samples = 0;
};

// Runs the whole dataset through the model in evaluation mode, in batches of
// at most the model's capacity.
EvalResult Evaluate(Model& model, const Dataset& data);

}  // namespace mt
