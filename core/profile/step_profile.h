// Where the time of profiled training steps went, summed over the steps
// after a few warm-up ones (the first steps fault in buffers, size scratch
// and compile kernels, which says nothing about the steady state). Fed from
// Model::ComputeGradients' LayerTimes; allocates nothing after construction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/model/model.h"

namespace mt {

class StepProfile {
 public:
  StepProfile(size_t layers, int warmup_steps);

  // One profiled pass: `times` as the model filled them, `batch` samples,
  // `data_seconds` filling and uploading the batch, `pass_seconds` the wall
  // time of ComputeGradients itself. Counted unless still warming up.
  void AddPass(const LayerTimes& times, int batch, double data_seconds, double pass_seconds);
  // The optimizer step after the last pass (counted with it).
  void AddOptimizerStep(double seconds);

  int warmup_steps() const { return warmup_; }
  // Passes seen, warm-up included, and those counted.
  int64_t passes_seen() const { return seen_; }
  int64_t steps() const { return steps_; }
  int64_t samples() const { return samples_; }
  // Sums over the counted steps, in seconds.
  double forward(size_t layer) const { return forward_[layer]; }
  double backward(size_t layer) const { return backward_[layer]; }
  double loss() const { return loss_; }
  double transfer() const { return transfer_; }
  double data() const { return data_; }
  double pass() const { return pass_; }
  double optimizer() const { return optimizer_; }
  // Forward, backward, loss and transfer: what the per-layer figures account for.
  double accounted() const;
  size_t layers() const { return forward_.size(); }

 private:
  int warmup_;
  int64_t seen_ = 0, steps_ = 0, samples_ = 0;
  bool last_counted_ = false;
  std::vector<double> forward_, backward_;
  double loss_ = 0, transfer_ = 0, data_ = 0, pass_ = 0, optimizer_ = 0;
};

}  // namespace mt
