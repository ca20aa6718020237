#include "core/train/model_health.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace mt::health {

std::string BrokenModelReason(const Model& model, double test_loss, int classes) {
  std::vector<float> w(model.ParamCount());
  model.GetParams(w.data());
  size_t bad = 0;
  for (float v : w) bad += !std::isfinite(v);
  char why[200];
  if (bad > 0) {
    std::snprintf(why, sizeof why, "the model is broken: %zu of its %zu weights are not finite",
                  bad, w.size());
    return why;
  }
  if (test_loss < 0) return "";
  const double bound = kBrokenLossFactor * std::log(std::max(2, classes));
  if (!std::isfinite(test_loss) || test_loss > bound) {
    std::snprintf(why, sizeof why,
                  "the model is broken: its test loss is %g (a uniform guess over %d classes "
                  "scores %.2f)",
                  test_loss, classes, std::log(std::max(2, classes)));
    return why;
  }
  return "";
}

std::string CollapsedModelReason(const std::vector<EvalPoint>& evals, int classes) {
  if (evals.empty()) return "";
  const EvalPoint& last = evals.back();
  const EvalPoint& best =
      *std::max_element(evals.begin(), evals.end(), [](const EvalPoint& a, const EvalPoint& b) {
        return a.test_accuracy < b.test_accuracy;
      });
  const double chance = 1.0 / std::max(2, classes), floor = chance + kChanceMargin;
  const double uniform_loss = std::log(std::max(2, classes));
  char why[300];
  if (last.test_accuracy <= floor) {
    if (best.test_accuracy > floor + kChanceMargin) {
      std::snprintf(why, sizeof why,
                    "the model is at chance: its test accuracy fell to %.3f (chance %.3f) from "
                    "%.3f at step %lld",
                    last.test_accuracy, chance, best.test_accuracy,
                    static_cast<long long>(best.step));
      return why;
    }
    if (last.test_loss >= kUniformLossShare * uniform_loss) {
      std::snprintf(why, sizeof why,
                    "the model is at chance: test accuracy %.3f (chance %.3f) and test loss %.4f "
                    "(a uniform guess scores %.4f)",
                    last.test_accuracy, chance, last.test_loss, uniform_loss);
      return why;
    }
    return "";
  }
  if (best.test_accuracy > floor &&
      last.test_accuracy - chance < 0.5 * (best.test_accuracy - chance)) {
    std::snprintf(why, sizeof why,
                  "the model collapsed: its test accuracy fell to %.3f from %.3f at step %lld, "
                  "more than half of what it had gained over chance (%.3f)",
                  last.test_accuracy, best.test_accuracy, static_cast<long long>(best.step),
                  chance);
    return why;
  }
  return "";
}

std::string ResultProblem(const Model& model, const std::vector<EvalPoint>& evals, int classes) {
  std::string why =
      BrokenModelReason(model, evals.empty() ? -1.0 : evals.back().test_loss, classes);
  if (why.empty()) why = CollapsedModelReason(evals, classes);
  return why;
}

}  // namespace mt::health
