#include "core/profile/step_profile.h"

#include <stdexcept>

namespace mt {

StepProfile::StepProfile(size_t layers, int warmup_steps)
    : warmup_(warmup_steps), forward_(layers, 0.0), backward_(layers, 0.0) {}

void StepProfile::AddPass(const LayerTimes& times, int batch, double data_seconds,
                          double pass_seconds) {
  if (times.forward.size() != forward_.size() || times.backward.size() != backward_.size())
    throw std::invalid_argument("StepProfile: times for " + std::to_string(times.forward.size()) +
                                " layers, profile of " + std::to_string(forward_.size()));
  last_counted_ = ++seen_ > warmup_;
  if (!last_counted_) return;
  ++steps_;
  samples_ += batch;
  for (size_t i = 0; i < forward_.size(); ++i) {
    forward_[i] += times.forward[i];
    backward_[i] += times.backward[i];
  }
  loss_ += times.loss;
  transfer_ += times.transfer;
  data_ += data_seconds;
  pass_ += pass_seconds;
}

void StepProfile::AddOptimizerStep(double seconds) {
  if (last_counted_) optimizer_ += seconds;
}

double StepProfile::accounted() const {
  double sum = loss_ + transfer_;
  for (size_t i = 0; i < forward_.size(); ++i) sum += forward_[i] + backward_[i];
  return sum;
}

}  // namespace mt
