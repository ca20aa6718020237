#pragma once

#include <cstdint>
#include <string>

#include "core/model/model.h"
#include "core/optim/optimizer.h"

namespace mt {

struct RunPosition {
  int64_t step = 0;
  int64_t epoch = 0;
  uint64_t seed = 0;
  int64_t global_batch = 0;  // the samples of one step
};

// Snapshots the model's weights and the optimizer's state into
// dir/ckpt-<step>.mtc (atomically), keeps the newest `keep` checkpoints and
// returns the path. Throws CheckpointError.
std::string SaveTrainingCheckpoint(const std::string& dir, const std::string& spec_text,
                                   const Model& model, const Optimizer& optimizer,
                                   const RunPosition& at, int keep = 3);

}  // namespace mt
