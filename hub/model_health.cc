#include "hub/model_health.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace mt {

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

}  // namespace mt
