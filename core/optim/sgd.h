#pragma once

#include "core/optim/optimizer.h"

namespace mt {

// SGD with momentum and L2 weight decay, as PyTorch defines it:
// v = momentum * v + (g + wd * p); p -= lr * v.
class Sgd : public Optimizer {
 public:
  Sgd(const OptimizerConfig& config, kernels::Backend& backend, size_t param_count)
      : Optimizer(config, backend, param_count, SlotsPerParam(config)) {}

 protected:
  void StepRange(kernels::View params, kernels::View grads, size_t begin, size_t count) override {
    backend_.SgdUpdate(kernels::SgdHyper{config_.lr, config_.momentum, config_.weight_decay},
                       params, grads, Slot(0, begin, count));
  }
};

}  // namespace mt
