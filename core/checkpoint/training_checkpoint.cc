#include "core/checkpoint/training_checkpoint.h"

#include "core/checkpoint/checkpoint.h"

namespace mt {

std::string SaveTrainingCheckpoint(const std::string& dir, const std::string& spec_text,
                                   const Model& model, const Optimizer& optimizer,
                                   const RunPosition& at, int keep) {
  Checkpoint ck;
  ck.model_spec = spec_text;
  ck.step = at.step;
  ck.epoch = at.epoch;
  ck.seed = at.seed;
  ck.global_batch = at.global_batch;
  ck.weights.resize(model.ParamCount());
  model.GetParams(ck.weights.data());
  ck.running_stats.resize(model.RunningStatCount());
  model.GetRunningStats(ck.running_stats.data());
  ck.optimizer = optimizer.SaveState();
  const std::string path = CheckpointPath(dir, at.step);
  SaveCheckpoint(path, ck);
  PruneCheckpoints(dir, keep);
  return path;
}

}  // namespace mt
