#pragma once

#include "core/optim/optimizer.h"

namespace mt {

// Adam with bias correction and L2 weight decay added to the gradient
// (PyTorch's Adam, not AdamW).
class Adam : public Optimizer {
 public:
  Adam(const OptimizerConfig& config, kernels::Backend& backend, size_t param_count)
      : Optimizer(config, backend, param_count, SlotsPerParam(config)) {}

 protected:
  void StepRange(kernels::View params, kernels::View grads, size_t begin, size_t count) override {
    kernels::AdamHyper h;
    h.lr = config_.lr;
    h.beta1 = config_.beta1;
    h.beta2 = config_.beta2;
    h.eps = config_.eps;
    h.weight_decay = config_.weight_decay;
    h.step = steps_;
    backend_.AdamUpdate(h, params, grads, Slot(0, begin, count), Slot(1, begin, count));
  }
};

}  // namespace mt
