// Optimizers run on the backend that holds the parameters, so the hub's
// master copy and every worker's copy are updated by the same code. Their
// state (step count, hyperparameters, slot buffers) is saved in checkpoints
// and sent to workers that join late.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/backend.h"

namespace mt {

enum class OptimizerKind { kSgd, kAdam };
// "sgd" | "adam": for reports, logs and messages (the command line parses
// the words, core/cli/common_options.h).
const char* OptimizerKindName(OptimizerKind kind);
// The learning rate a run gets when none is given, for a (global) batch of
// `batch` samples per step. Measured with LeNet-5 on Fashion-MNIST, samples
// to 0.85 test accuracy, median of 3 seeds (tests/bench/batch_scaling.py,
// docs/benchmarks.md):
// - SGD (momentum 0.9): 0.05 whatever the batch. At batch 64 0.1 and more
//   never reach 0.85; at 192 0.1 is no better than 0.05 and 0.15 worse.
// - Adam: 0.004 at batch 64 (0.001 needs 2x the samples, SGD's 0.05 stays
//   at chance), scaled with the square root of the batch (Adam's scaling
//   rule, Malladi et al. 2022): at 192, 0.008 was the best in rounds of 4
//   to 64 local steps and 0.012 in per-step exchanges; the rule's 0.0069
//   sits between.
float DefaultLearningRate(OptimizerKind kind, int64_t batch);

struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::kSgd;
  float lr = 0.05f;
  float momentum = 0.9f;
  float weight_decay = 0.0f;
  float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;
  // lr is DefaultLearningRate's for the run's batch (no --lr given), so a
  // hub that changes its global batch changes lr with it. Not persisted:
  // a state's lr is what it was trained with.
  bool lr_from_batch = false;
};

// The settings an optimizer is built with, wherever they come from (the
// command line, a checkpoint): the ranges the flags take (core/cli) and the
// one check of a whole config.
constexpr double kMinLearningRate = 1e-9, kMaxLearningRate = 100;
constexpr double kMaxMomentum = 0.9999;
constexpr double kMaxWeightDecay = 1;
// Throws std::invalid_argument naming the first setting that is not finite
// or outside its range (lr, momentum, weight_decay; Adam's beta1, beta2 in
// [0, 1) and eps in (0, 1]).
void CheckOptimizerConfig(const OptimizerConfig& config);

// A learning rate this many times above the optimizer's default for the
// batch (DefaultLearningRate), or this many times below it, is far from
// what trains: Adam at SGD's 0.05 (12.5 times its 0.004 at batch 64) stays
// at chance (docs/benchmarks.md).
constexpr double kUsualLrAbove = 5, kUsualLrBelow = 20;
// "" when `lr` is within the usual range of `kind` at `batch` samples per
// step; else a sentence saying how far off it is, and what the default is.
std::string UnusualLearningRate(OptimizerKind kind, double lr, int64_t batch);

// What a run (RunSettings: mthub, mtworker --standalone) trains with
// unless told otherwise: Adam at its rate for a batch of 64, which the
// daemons then scale to the run's batch. Adam reached the accuracy sooner
// than SGD on every model measured (LeNet-5, mentee, mobilenet-tiny), and
// its rate grows with the batch where SGD's cannot, which is what a group
// of devices needs (docs/benchmarks.md). OptimizerConfig itself stays SGD.
inline OptimizerConfig RunDefaultOptimizer() {
  OptimizerConfig c;
  c.kind = OptimizerKind::kAdam;
  c.lr = DefaultLearningRate(c.kind, 64);
  return c;
}

struct OptimizerState {
  OptimizerConfig config;
  int64_t steps = 0;
  std::vector<float> slots;  // velocity (sgd) or m then v (adam)
};

class Optimizer {
 public:
  Optimizer(const OptimizerConfig& config, kernels::Backend& backend, size_t param_count,
            int slots);
  virtual ~Optimizer() = default;

  const char* Kind() const { return OptimizerKindName(config_.kind); }
  // One update of `params` from `grads` (param_count floats each), over the
  // trained ranges only. Allocates nothing.
  void Step(kernels::View params, kernels::View grads);
  // The [begin, end) ranges of parameters it updates (all of them unless
  // set): frozen layers' parameters are left exactly as they are, weight
  // decay included.
  void set_trained_ranges(std::vector<std::pair<size_t, size_t>> ranges) {
    ranges_ = std::move(ranges);
  }

  int64_t steps() const { return steps_; }
  // Floats in the slot buffers (param_count times the slots per parameter).
  size_t slot_values() const { return param_count_ * static_cast<size_t>(slot_count_); }
  float lr() const { return config_.lr; }
  void set_lr(float lr) { config_.lr = lr; }
  const OptimizerConfig& config() const { return config_; }

  OptimizerState SaveState() const;
  // Validates kind and sizes; throws std::invalid_argument naming the mismatch.
  void LoadState(const OptimizerState& state);

 protected:
  // The update of params[begin, begin + count) (the views are that range).
  virtual void StepRange(kernels::View params, kernels::View grads, size_t begin, size_t count) = 0;
  // Slot i's values for params[begin, begin + count); empty without slots.
  kernels::View Slot(int i, size_t begin, size_t count) const;

  OptimizerConfig config_;
  kernels::Backend& backend_;
  size_t param_count_;
  int slot_count_;
  int64_t steps_ = 0;
  std::unique_ptr<kernels::Buffer> slots_;
  std::vector<std::pair<size_t, size_t>> ranges_;
};

// Slot buffers per parameter the optimizer `config` describes keeps: SGD's
// velocity (none without momentum), Adam's m and v. The optimizers and the
// memory predictions (worker/local_trainer.h) both read it.
int SlotsPerParam(const OptimizerConfig& config);

std::unique_ptr<Optimizer> MakeOptimizer(const OptimizerConfig& config, kernels::Backend& backend,
                                         size_t param_count);

}  // namespace mt
