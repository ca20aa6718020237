// Averaging the changes of rounds of unequal length (FedNova, Wang et al.
// 2020, "Tackling the Objective Inconsistency Problem in Heterogeneous
// Federated Optimization"). A worker that took tau_i local steps moved
// about tau_i times as far as one step would: a plain weighted mean of the
// changes pulls the model towards the workers that took the most steps
// (and their data). FedNova averages each change per step, weighted by
// the worker's data p_i, and scales the result by the effective steps:
//
//   change = tau_eff * sum_i p_i * d_i / tau_i,  tau_eff = sum_i p_i tau_i
//   (p_i normalised to sum to 1)
//
// As the reducer's weighted mean (sum w_i d_i / sum w_i) times a scale:
// w_i = p_i / tau_i, scale = (sum p_i tau_i)(sum p_i / tau_i) / (sum p_i)^2.
// With equal tau the weights are p_i's and the scale 1. The reducer takes
// whole-number weights: w_i is p_i * L / tau_i with L the steps' least
// common multiple. Pure.
#pragma once

#include <cstdint>
#include <vector>

namespace mt {

struct FedNovaWeights {
  std::vector<int64_t> weights;  // for the reducer's weighted mean
  double scale = 1;              // on its result
};

// `data_weights`: p_i (samples, or each share's size); `steps`: tau_i >= 1.
// Into `out`, whose weights keep their capacity (the reduction calls it
// for every segment).
void FedNovaOf(const std::vector<int64_t>& data_weights, const std::vector<int>& steps,
               FedNovaWeights* out);
inline FedNovaWeights FedNovaOf(const std::vector<int64_t>& data_weights,
                                const std::vector<int>& steps) {
  FedNovaWeights out;
  FedNovaOf(data_weights, steps, &out);
  return out;
}

}  // namespace mt
