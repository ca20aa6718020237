#include "hub/evaluation/model_health.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace mt {

std::string LostLearningReason(const TrainLossTrend& trend, double test_loss, int classes) {
  if (test_loss < 0 || trend.best < 0) return "";
  const double uniform_loss = std::log(std::max(2, classes));
  if (test_loss <= kLostLossFactor * trend.best || test_loss <= kLostLossShare * uniform_loss)
    return "";
  char why[240];
  std::snprintf(why, sizeof why,
                "the model collapsed: its test loss is %.4f, more than %.0f times the training "
                "loss it had reached (%.4f; a uniform guess scores %.4f)",
                test_loss, kLostLossFactor, trend.best, uniform_loss);
  return why;
}

}  // namespace mt
