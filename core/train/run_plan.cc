#include "core/train/run_plan.h"

#include <algorithm>

#include "kernels/dropout_hash.h"

namespace mt {

RunPlan::RunPlan(int64_t train_samples, int64_t batch, int64_t epochs, int64_t max_steps)
    : train_samples_(train_samples), batch_(batch), epochs_asked_(epochs), max_steps_(max_steps) {
  if (train_samples < 1) throw std::invalid_argument("the training set is empty");
  if (batch < 1) throw RunLengthError("the batch must hold at least one sample");
  if (epochs < 0 || max_steps < 0) throw RunLengthError("--epochs and --steps cannot be negative");
  steps_per_epoch_ = (train_samples + batch - 1) / batch;
  if (epochs == 0)
    epochs = max_steps > 0 ? (max_steps + steps_per_epoch_ - 1) / steps_per_epoch_ : 1;
  epochs_ = epochs;
  total_steps_ = steps_per_epoch_ * epochs;
  if (max_steps > total_steps_)
    throw RunLengthError("--steps " + std::to_string(max_steps) + " is more than --epochs " +
                         std::to_string(epochs) + " cover (" + std::to_string(steps_per_epoch_) +
                         " steps of " + std::to_string(batch) +
                         " samples per epoch): give more --epochs, or leave --epochs out");
  if (max_steps > 0) total_steps_ = max_steps;
}

RunPlan RunPlan::WithBatch(int64_t batch) const {
  return RunPlan(train_samples_, batch, epochs_asked_, max_steps_);
}

int RunPlan::BatchAt(int64_t step) const {
  return static_cast<int>(std::min<int64_t>(batch_, train_samples_ - FirstSample(step)));
}

void RunPlan::CheckResumable(int64_t step, const std::string& origin) const {
  if (step < 0) throw std::runtime_error("checkpoint " + origin + " has a negative step");
  if (step > total_steps_)
    throw std::runtime_error("checkpoint " + origin + " is at step " + std::to_string(step) +
                             ", beyond this run's " + std::to_string(total_steps_) +
                             " steps (same --epochs, --steps and batch?)");
}

uint64_t DropoutSeed(uint64_t run_seed, int64_t step, int64_t first_sample) {
  return kernels::MixBits(run_seed) ^ static_cast<uint64_t>(step) ^
         kernels::MixBits(static_cast<uint64_t>(first_sample) + 1);
}

}  // namespace mt
