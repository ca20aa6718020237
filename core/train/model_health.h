// Whether the model at the end of a run is worth calling a result: a run
// whose model diverged, was broken (by a hostile worker the aggregation did
// not stop, or by too high a learning rate) or sits at chance must not end
// in a reported success. mtworker --standalone ends with exit 1 on these,
// as mthub does.
//
// The hub judges its master model with these too (hub/hub_evaluation.cc);
// what only the hub can add is hub/evaluation/model_health.h.
#pragma once

#include <string>
#include <vector>

#include "core/model/model.h"
#include "core/train/run_summary.h"

namespace mt::health {

// A test loss this many times that of a uniform guess (ln classes) is not
// a model that learned anything: an honest run starts near 1x and only
// goes down, while weights blown up give losses in the hundreds or more
// with chance accuracy.
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

// Both, in that order: "" when the run's model is a result.
std::string ResultProblem(const Model& model, const std::vector<EvalPoint>& evals, int classes);

}  // namespace mt::health
