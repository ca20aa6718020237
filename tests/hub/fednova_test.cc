// Rounds of unequal length averaged per step (hub/aggregation/fednova.h),
// against FedNova's formula computed by hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "hub/aggregation/fednova.h"

namespace mt {
namespace {

// The reducer's weighted mean of `changes` with `weights`, times `scale`.
std::vector<double> Combine(const FedNovaWeights& f,
                            const std::vector<std::vector<double>>& changes) {
  std::vector<double> out(changes[0].size(), 0);
  double total = 0;
  for (int64_t w : f.weights) total += static_cast<double>(w);
  for (size_t i = 0; i < changes.size(); ++i)
    for (size_t j = 0; j < out.size(); ++j)
      out[j] += static_cast<double>(f.weights[i]) / total * changes[i][j];
  for (double& v : out) v *= f.scale;
  return out;
}

TEST(FedNova, UnequalStepCountsAreAveragedPerStepAsTheFormulaSays) {
  // A fast worker took 4 steps of 64 samples, a slow one 1 step of 8.
  const std::vector<int64_t> samples{256, 8};
  const std::vector<int> steps{4, 1};
  const std::vector<std::vector<double>> changes{{4, 0}, {0, 1}};
  const FedNovaWeights f = FedNovaOf(samples, steps);
  // By hand: p = (256, 8) / 264; tau_eff = (256*4 + 8*1) / 264 = 1032/264;
  // change = tau_eff * (p_1 * (4, 0) / 4 + p_2 * (0, 1) / 1)
  //        = (1032/264) * (256/264, 8/264) = (3.79063, 0.11846).
  EXPECT_EQ(f.weights, (std::vector<int64_t>{256, 32}));  // p_i * lcm(4, 1) / tau_i
  EXPECT_NEAR(f.scale, 1032.0 * 72.0 / (264.0 * 264.0), 1e-12);
  const std::vector<double> change = Combine(f, changes);
  EXPECT_NEAR(change[0], 1032.0 / 264.0 * 256.0 / 264.0, 1e-9);
  EXPECT_NEAR(change[1], 1032.0 / 264.0 * 8.0 / 264.0, 1e-9);
  // A plain weighted mean would give the slow worker's direction a quarter
  // of that: (3.8788, 0.0303).
  EXPECT_GT(change[1], 3.5 * 8.0 / 264.0);
}

TEST(FedNova, EqualStepsKeepTheDataWeightsAndNoScale) {
  const FedNovaWeights f = FedNovaOf({100, 300, 50}, {4, 4, 4});
  EXPECT_EQ(f.weights, (std::vector<int64_t>{100, 300, 50}));
  EXPECT_DOUBLE_EQ(f.scale, 1.0);
}

TEST(FedNova, ShareWeightsAndThreeLengths) {
  // --partition weights by share size; three lengths: lcm(8, 3, 2) = 24.
  const std::vector<int64_t> shares{1000, 600, 400};
  const std::vector<int> steps{8, 3, 2};
  const FedNovaWeights f = FedNovaOf(shares, steps);
  EXPECT_EQ(f.weights, (std::vector<int64_t>{3000, 4800, 4800}));
  const double p_tau = 1000 * 8 + 600 * 3 + 400 * 2,
               p_over_tau = 1000 / 8.0 + 600 / 3.0 + 400 / 2.0;
  EXPECT_NEAR(f.scale, p_tau * p_over_tau / (2000.0 * 2000.0), 1e-12);
  // One coordinate each: change_i = e_i * tau_i (a step's change of 1).
  const std::vector<double> change = Combine(f, {{8, 0, 0}, {0, 3, 0}, {0, 0, 2}});
  // FedNova: tau_eff * p_i * 1 for each.
  const double tau_eff = p_tau / 2000.0;
  EXPECT_NEAR(change[0], tau_eff * 0.5, 1e-9);
  EXPECT_NEAR(change[1], tau_eff * 0.3, 1e-9);
  EXPECT_NEAR(change[2], tau_eff * 0.2, 1e-9);
}

}  // namespace
}  // namespace mt
