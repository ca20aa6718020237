// Optimizers run on the backend that holds the parameters, so the hub's
// master copy and every worker's copy are updated by the same code. Their
// state (step count, hyperparameters, slot buffers) is saved in checkpoints
// and sent to workers that join late.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/backend.h"

namespace mt {

struct OptimizerConfig {
  std::string kind = "sgd";  // sgd | adam
  float lr = 0.05f;
  float momentum = 0.9f;
  float weight_decay = 0.0f;
  float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;
};

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

  const char* Kind() const { return config_.kind.c_str(); }
  // One update of `params` from `grads` (param_count floats each). Allocates nothing.
  virtual void Step(kernels::View params, kernels::View grads) = 0;

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
  kernels::View Slot(int i) const;

  OptimizerConfig config_;
  kernels::Backend& backend_;
  size_t param_count_;
  int slot_count_;
  int64_t steps_ = 0;
  std::unique_ptr<kernels::Buffer> slots_;
};

std::unique_ptr<Optimizer> MakeOptimizer(const OptimizerConfig& config, kernels::Backend& backend,
                                         size_t param_count);

}  // namespace mt
