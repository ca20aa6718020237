// Whether the master model at the end of a run is worth calling a result:
// a run whose model diverged or was broken (by a hostile worker the
// aggregation did not stop, or by too high a learning rate) must not end
// in a reported success.
#pragma once

#include <string>
#include <vector>

#include "core/model/model.h"
#include "core/train/run_summary.h"

namespace mt {

// A test loss this many times that of a uniform guess (ln classes) is not
// a model that learned anything: an honest run starts near 1x and only
// goes down, while weights blown up by a hostile worker give losses in the
// hundreds or more with chance accuracy.
constexpr double kBrokenLossFactor = 10;

// "" when the weights are finite and the final test loss (< 0: not
// evaluated) is finite and below kBrokenLossFactor * ln(classes); else why.
std::string BrokenModelReason(const Model& model, double test_loss, int classes);

// Test accuracy at most 1 / classes + kChanceMargin is chance: a model
// that answers one class, or a uniform guess (a constant bias walked the
// model there with finite weights and a loss of ln(classes), measured).
constexpr double kChanceMargin = 0.05;
// Such a model learned nothing when its loss is at least this share of a
// uniform guess's; an honest run's loss falls below it within its first
// evaluations.
constexpr double kUniformLossShare = 0.95;

// "" unless the last of `evals` (in order; none: "") shows a model at
// chance that either did better before (its best accuracy was above the
// chance floor by kChanceMargin more) or never learned anything (its loss
// that of a uniform guess), or one that lost more than half of what its
// best evaluation had gained over chance; else why.
std::string CollapsedModelReason(const std::vector<EvalPoint>& evals, int classes);

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
