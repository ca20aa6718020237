// The RDP accountant against published numbers: TensorFlow Privacy's
// rdp_accountant_test.py (compute_rdp of the sampled Gaussian) and Google's
// dp_accounting rdp_privacy_accountant_test.py (the RDP-to-DP conversion).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/privacy/dp_accountant.h"

namespace mt::dp {
namespace {

TEST(DpAccountant, SampledGaussianRdpMatchesTensorFlowPrivacy) {
  // compute_rdp(q=0.1, noise_multiplier=2, steps=10, orders=5) = 0.07737.
  EXPECT_NEAR(10 * SampledGaussianRdp(0.1, 2, 5), 0.07737, 1e-5);
  // compute_rdp(0.01, 2.5, 50, [1.5, 2.5, 5, 50, 100]) =
  // [0.00065, 0.001085, 0.00218075, 0.023846, 167.416307]: fractional
  // orders (1.5, 2.5) take the series, integer ones the binomial sum.
  const double orders[] = {1.5, 2.5, 5, 50, 100};
  const double published[] = {0.00065, 0.001085, 0.00218075, 0.023846, 167.416307};
  for (int i = 0; i < 5; ++i)
    EXPECT_NEAR(50 * SampledGaussianRdp(0.01, 2.5, orders[i]), published[i],
                1e-5 * std::max(1.0, published[i]))
        << "order " << orders[i];
}

TEST(DpAccountant, UnsampledGaussianIsOrderOverTwoSigmaSquared) {
  EXPECT_DOUBLE_EQ(SampledGaussianRdp(1, 2.71828, 3.14159), 3.14159 / (2 * 2.71828 * 2.71828));
  EXPECT_EQ(SampledGaussianRdp(0, 1, 8), 0);
  EXPECT_TRUE(std::isinf(SampledGaussianRdp(1, 0, 8)));
}

TEST(DpAccountant, ConversionMatchesDpAccounting) {
  // Constant RDP 1.1 at orders 2..32 (pure DP), delta 1e-5: epsilon
  // 1.32783806176 at order 32.
  std::vector<double> orders, rdp;
  for (int a = 2; a <= 32; ++a) {
    orders.push_back(a);
    rdp.push_back(1.1);
  }
  const Guarantee g = EpsilonFromRdp(orders, rdp, 1e-5);
  EXPECT_NEAR(g.epsilon, 1.32783806176, 1e-9);
  EXPECT_EQ(g.order, 32);
  // The Gaussian with noise multiplier 4.530877117 is exactly (1, 1e-6)-DP
  // over a dense grid of orders.
  orders.clear();
  rdp.clear();
  for (int i = 1001; i < 100000; i += 3) {
    orders.push_back(0.001 * i);
    rdp.push_back(SampledGaussianRdp(1, 4.530877117, orders.back()));
  }
  EXPECT_NEAR(EpsilonFromRdp(orders, rdp, 1e-6).epsilon, 1.0, 1e-3);
}

TEST(DpAccountant, CompositionAddsAndMoreNoiseSpendsLess) {
  Accountant a(0.05, 1.3);
  a.AddRounds(100);
  EXPECT_DOUBLE_EQ(a.EpsilonAt(1e-5), Epsilon(0.05, 1.3, 100, 1e-5));
  EXPECT_LT(Epsilon(0.05, 1.3, 100, 1e-5), Epsilon(0.05, 1.3, 400, 1e-5));
  EXPECT_GT(Epsilon(1, 5, 100, 1e-5), Epsilon(1, 10, 100, 1e-5));
  EXPECT_LT(Epsilon(0.01, 5, 100, 1e-5), Epsilon(1, 5, 100, 1e-5));  // sampling amplifies
  EXPECT_EQ(Accountant(1, 1).EpsilonAt(1e-5), 0);                    // no round yet
}

TEST(DpAccountant, SolvedNoiseMeetsTheTargetTightly) {
  for (double target : {1.0, 8.0}) {
    const double sigma = NoiseForEpsilon(1, 235, target, 1e-5, kMaxNoiseMultiplier);
    ASSERT_GT(sigma, 0) << target;
    EXPECT_LE(Epsilon(1, sigma, 235, 1e-5), target);
    EXPECT_GT(Epsilon(1, sigma * 0.99, 235, 1e-5), target);
  }
  // 938 unsampled rounds cannot reach epsilon 1 below the cap; the
  // smallest they can is what the cap spends.
  EXPECT_EQ(NoiseForEpsilon(1, 938, 1, 1e-5, kMaxNoiseMultiplier), 0);
  EXPECT_GT(Epsilon(1, kMaxNoiseMultiplier, 938, 1e-5), 1);
}

}  // namespace
}  // namespace mt::dp
