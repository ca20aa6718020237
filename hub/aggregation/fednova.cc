#include "hub/aggregation/fednova.h"

#include <cstddef>
#include <numeric>

namespace mt {

void FedNovaOf(const std::vector<int64_t>& data_weights, const std::vector<int>& steps,
               FedNovaWeights* out) {
  out->weights.clear();
  out->scale = 1;
  int64_t lcm = 1;
  for (int tau : steps) lcm = std::lcm(lcm, static_cast<int64_t>(tau));
  double p_sum = 0, p_tau = 0, p_over_tau = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    const auto p = static_cast<double>(data_weights[i]);
    const auto tau = static_cast<double>(steps[i]);
    out->weights.push_back(data_weights[i] * (lcm / steps[i]));
    p_sum += p;
    p_tau += p * tau;
    p_over_tau += p / tau;
  }
  if (p_sum > 0) out->scale = p_tau * p_over_tau / (p_sum * p_sum);
}

}  // namespace mt
