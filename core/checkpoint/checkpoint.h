// A checkpoint is the whole training run: model spec, weights, optimizer
// state, step, epoch and seed. Format: "MTCK", a format version, the
// proto::Checkpoint message (proto/train_state.proto), then a CRC-32 of
// everything before it. Written atomically.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/optim/optimizer.h"

namespace mt {

struct CheckpointError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Checkpoint {
  std::string model_spec;  // text-format model spec
  int64_t step = 0;
  int64_t epoch = 0;
  uint64_t seed = 0;
  std::vector<float> weights;
  OptimizerState optimizer;
  // The model's running statistics (batch norm): not trained, but needed to
  // evaluate. Empty when the model has none.
  std::vector<float> running_stats;
  int64_t global_batch = 0;  // the batch its steps count; 0: not recorded
};

// 2: the body is a proto::Checkpoint. Format 1 (hand-written sections) is
// refused with a message saying so.
constexpr uint32_t kCheckpointVersion = 2;

std::string EncodeCheckpoint(const Checkpoint& c);
// `origin` names the source in errors. Checks the content as well as the
// checksum: a checkpoint that passes its checksum but holds non-finite
// weights, a negative step or optimizer settings the command line would
// refuse (CheckOptimizerConfig) is refused.
Checkpoint DecodeCheckpoint(const std::string& bytes, const std::string& origin);

void SaveCheckpoint(const std::string& path, const Checkpoint& c);
Checkpoint LoadCheckpoint(const std::string& path);

std::string CheckpointPath(const std::string& dir, int64_t step);

// What --resume continues from: the newest checkpoint in dir that loads
// (checksum, body and content: finite weights and optimizer state, optimizer
// settings in range, step and epoch not negative), and the newer ones it passed over, each with
// why.
struct ResumePoint {
  std::string path;  // "" when dir has no checkpoint at all
  Checkpoint checkpoint;
  std::vector<std::string> skipped;  // "PATH: reason", newest first
};
// Throws CheckpointError, listing every reason, when dir has checkpoints
// and none of them loads: starting afresh would hide the loss.
ResumePoint NewestValidCheckpoint(const std::string& dir);
// Deletes all but the newest `keep` checkpoints in dir.
void PruneCheckpoints(const std::string& dir, int keep);

}  // namespace mt
