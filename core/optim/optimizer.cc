#include "core/optim/optimizer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "core/optim/adam.h"
#include "core/optim/sgd.h"

namespace mt {

Optimizer::Optimizer(const OptimizerConfig& config, kernels::Backend& backend, size_t param_count,
                     int slots)
    : config_(config), backend_(backend), param_count_(param_count), slot_count_(slots) {
  if (slots > 0) {
    slots_ = backend_.Allocate(param_count * slots);
    backend_.Fill(kernels::WholeOf(*slots_), 0.0f);
  }
}

kernels::View Optimizer::Slot(int i, size_t begin, size_t count) const {
  if (!slots_) return kernels::View{};
  return kernels::WholeOf(*slots_).Slice(static_cast<size_t>(i) * param_count_ + begin, count);
}

void Optimizer::Step(kernels::View params, kernels::View grads) {
  ++steps_;
  if (ranges_.empty()) {
    StepRange(params, grads, 0, param_count_);
    return;
  }
  for (const auto& [begin, end] : ranges_)
    StepRange(params.Slice(begin, end - begin), grads.Slice(begin, end - begin), begin,
              end - begin);
}

OptimizerState Optimizer::SaveState() const {
  OptimizerState s;
  s.config = config_;
  s.steps = steps_;
  s.slots.resize(param_count_ * slot_count_);
  if (slots_) backend_.Download(kernels::WholeOf(*slots_), s.slots.data());
  return s;
}

void Optimizer::LoadState(const OptimizerState& s) {
  if (s.config.kind != config_.kind)
    throw std::invalid_argument(std::string("optimizer state is for '") +
                                OptimizerKindName(s.config.kind) + "', not '" +
                                OptimizerKindName(config_.kind) + "' (resume with --optimizer " +
                                OptimizerKindName(s.config.kind) + ")");
  if (s.slots.size() != param_count_ * slot_count_)
    throw std::invalid_argument("optimizer state has " + std::to_string(s.slots.size()) +
                                " values, expected " + std::to_string(param_count_ * slot_count_));
  config_ = s.config;
  steps_ = s.steps;
  if (slots_) backend_.Upload(s.slots.data(), kernels::WholeOf(*slots_));
}

std::unique_ptr<Optimizer> MakeOptimizer(const OptimizerConfig& config, kernels::Backend& backend,
                                         size_t param_count) {
  switch (config.kind) {
    case OptimizerKind::kSgd: return std::make_unique<Sgd>(config, backend, param_count);
    case OptimizerKind::kAdam: return std::make_unique<Adam>(config, backend, param_count);
  }
  throw std::invalid_argument("unknown optimizer kind " +
                              std::to_string(static_cast<int>(config.kind)));
}

int SlotsPerParam(const OptimizerConfig& config) {
  return config.kind == OptimizerKind::kAdam ? 2 : config.momentum != 0.0f ? 1 : 0;
}

const char* OptimizerKindName(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::kSgd: return "sgd";
    case OptimizerKind::kAdam: return "adam";
  }
  return "unknown";
}

float DefaultLearningRate(OptimizerKind kind, int64_t batch) {
  if (kind == OptimizerKind::kSgd) return 0.05f;
  return static_cast<float>(0.004 *
                            std::sqrt(static_cast<double>(std::max<int64_t>(batch, 1)) / 64));
}

namespace {

// `value` in [min, max] (`open_max`: [min, max)), finite; else throws. The
// settings are floats: the bounds are taken as floats too, so a flag at a
// bound (--lr 1e-9, stored as the float just below) is within it.
void CheckRange(const char* name, float value, float min, float max, bool open_max = false) {
  if (std::isfinite(value) && value >= min && (open_max ? value < max : value <= max)) return;
  char why[200];
  std::snprintf(why, sizeof why, "optimizer setting %s is %g: expected %g to %g%s", name, value,
                min, max, open_max ? " (not included)" : "");
  throw std::invalid_argument(why);
}

}  // namespace

void CheckOptimizerConfig(const OptimizerConfig& c) {
  if (c.kind != OptimizerKind::kSgd && c.kind != OptimizerKind::kAdam)
    throw std::invalid_argument("unknown optimizer kind " +
                                std::to_string(static_cast<int>(c.kind)));
  CheckRange("lr", c.lr, kMinLearningRate, kMaxLearningRate);
  CheckRange("momentum", c.momentum, 0, kMaxMomentum);
  CheckRange("weight_decay", c.weight_decay, 0, kMaxWeightDecay);
  CheckRange("beta1", c.beta1, 0, 1, /*open_max=*/true);
  CheckRange("beta2", c.beta2, 0, 1, /*open_max=*/true);
  if (!(std::isfinite(c.eps) && c.eps > 0 && c.eps <= 1)) {
    char why[120];
    std::snprintf(why, sizeof why, "optimizer setting eps is %g: expected above 0, at most 1",
                  static_cast<double>(c.eps));
    throw std::invalid_argument(why);
  }
}

std::string UnusualLearningRate(OptimizerKind kind, double lr, int64_t batch) {
  const double usual = DefaultLearningRate(kind, batch);
  if (lr <= kUsualLrAbove * usual && lr >= usual / kUsualLrBelow) return "";
  char why[300];
  std::snprintf(why, sizeof why,
                "a learning rate of %g is %.0f times %s %s's usual %.3g at batch %lld; it may "
                "not train at all (leave --lr out for the default)",
                lr, lr > usual ? lr / usual : usual / lr, lr > usual ? "above" : "below",
                OptimizerKindName(kind), usual, static_cast<long long>(batch));
  return why;
}

}  // namespace mt
