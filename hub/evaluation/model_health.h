// What only the hub knows of its model's health at the end of a run: the
// workers' training loss, against which a final test loss shows a model
// that lost what it had learned. Broken and collapsed models are judged by
// core/train/model_health.h, as mtworker --standalone judges them.
#pragma once

#include <string>
#include <vector>

#include "core/model/model.h"
#include "core/train/model_health.h"
#include "core/train/run_summary.h"

namespace mt {

// The workers' training loss over a run, smoothed over ~1/kSmoothing steps,
// and the lowest it reached: a run evaluated once (one epoch) has no test
// history, but its training loss shows what the model had learned.
struct TrainLossTrend {
  static constexpr double kSmoothing = 0.05;
  static constexpr int64_t kWarmSteps = 20;  // before its best counts
  double smoothed = 0, best = -1;
  int64_t steps = 0;
  // A step (or round) whose samples' losses summed to loss_sum.
  void Add(double loss_sum, int64_t samples) {
    if (samples <= 0) return;
    const double loss = loss_sum / static_cast<double>(samples);
    smoothed = steps == 0 ? loss : (1 - kSmoothing) * smoothed + kSmoothing * loss;
    if (++steps >= kWarmSteps && (best < 0 || smoothed < best)) best = smoothed;
  }
};

// A final test loss this many times the best smoothed training loss, and
// above kLostLossShare of a uniform guess's, is a model that lost what it
// had learned (issue 32: a constant bias took --aggregate median from
// 0.86 to 0.66, and one of two workers to 0.23, in a single evaluation).
// Only for workers on the same data: with --partition each worker's
// training loss is on its own classes, and far below any test loss. A
// warning, not a failure: an honest run on little data overfits as far.
constexpr double kLostLossFactor = 2;
constexpr double kLostLossShare = 0.4;
// "" unless test_loss (< 0: not evaluated) says so; else why.
std::string LostLearningReason(const TrainLossTrend& trend, double test_loss, int classes);

}  // namespace mt
