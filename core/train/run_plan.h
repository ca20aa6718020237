// How long a run is and where each step falls: one cursor for standalone
// training and the hub, so steps-per-epoch, the samples a step covers,
// epoch ends, checkpoint timing and resume checks are worked out once.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace mt {

// A run length that cannot be honoured (e.g. --steps beyond --epochs):
// a command-line mistake, so the daemons exit 2 on it.
struct RunLengthError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

class RunPlan {
 public:
  // epochs 0: as many as max_steps needs (1 when max_steps is 0 too);
  // max_steps 0: whole epochs. Both given: max_steps must fit in the
  // epochs, else RunLengthError says which to change.
  RunPlan(int64_t train_samples, int64_t batch, int64_t epochs, int64_t max_steps);
  // The same run (samples, epochs, --steps) counted in steps of `batch`:
  // a hub that sizes its global batch from its workers' speeds replans so,
  // before the first step.
  RunPlan WithBatch(int64_t batch) const;

  int64_t train_samples() const { return train_samples_; }
  int64_t batch() const { return batch_; }
  int64_t steps_per_epoch() const { return steps_per_epoch_; }
  int64_t epochs() const { return epochs_; }
  int64_t total_steps() const { return total_steps_; }

  // Step s (0-based) trains in epoch EpochOf(s) (0-based) on positions
  // [FirstSample(s), FirstSample(s) + BatchAt(s)) of that epoch's order.
  int64_t EpochOf(int64_t step) const { return step / steps_per_epoch_; }
  int64_t FirstSample(int64_t step) const { return (step % steps_per_epoch_) * batch_; }
  int BatchAt(int64_t step) const;
  // After `steps_done` steps: an epoch has just ended.
  bool EpochEnded(int64_t steps_done) const {
    return steps_done > 0 && steps_done % steps_per_epoch_ == 0;
  }
  // Epochs begun after `steps_done` steps (a partial last one counts).
  int64_t EpochsBegun(int64_t steps_done) const {
    return (steps_done + steps_per_epoch_ - 1) / steps_per_epoch_;
  }
  // Checkpoints fall every `every` steps (0: none) and at every epoch end.
  bool CheckpointDue(int64_t steps_done, int64_t every) const {
    return (every > 0 && steps_done % every == 0) || EpochEnded(steps_done);
  }
  // A checkpoint at `step` continues this run; throws std::runtime_error
  // naming `origin` when it lies beyond it.
  void CheckResumable(int64_t step, const std::string& origin) const;

 private:
  int64_t train_samples_, batch_, steps_per_epoch_, epochs_, total_steps_;
  int64_t epochs_asked_, max_steps_;  // as given, 0s included
};

// The dropout seed of a step: the same recipe for standalone training and
// every worker, so a step's masks depend only on the run's seed, the step
// and the first sample of the batch (each worker's share differs).
uint64_t DropoutSeed(uint64_t run_seed, int64_t step, int64_t first_sample);

}  // namespace mt
