// The hub's side of differential privacy: central DP noises each combined
// segment with sigma * clip * the largest weight, counts a round at its
// first segment, and spends what the accountant says; distributed DP tells
// each worker its share of the noise and adds none itself.
#include "hub/aggregation/dp_aggregate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/privacy/dp_accountant.h"

namespace mt {
namespace {

DpSettings Settings(DpNoiseAt at) {
  DpSettings s;
  s.clip = 2;
  s.noise_multiplier = 1.5;
  s.noise_at = at;
  return s;
}

double Sd(const std::vector<float>& v) {
  double sum = 0, squares = 0;
  for (float x : v) {
    sum += x;
    squares += static_cast<double>(x) * x;
  }
  const auto n = static_cast<double>(v.size());
  return std::sqrt(squares / n - (sum / n) * (sum / n));
}

TEST(DpAggregate, CentralNoiseIsSigmaTimesClipTimesTheLargestWeight) {
  DpAggregate dp(Settings(DpNoiseAt::kHub), 3);
  std::vector<float> segment(100000, 0.0f);
  dp.OnCombined(segment.data(), segment.size(), 0.25, /*first=*/true);
  // 1.5 * 2 * 0.25 = 0.75; the sd's standard error is 0.75 / sqrt(2e5).
  EXPECT_NEAR(Sd(segment), 0.75, 0.01);
  EXPECT_EQ(dp.ForWorkers().clip(), 2);
  EXPECT_EQ(dp.ForWorkers().noise_stddev(), 0);  // the hub adds it
}

TEST(DpAggregate, RoundsCountAtTheirFirstSegmentAndSpendWhatTheAccountantSays) {
  DpAggregate dp(Settings(DpNoiseAt::kHub), 3);
  EXPECT_EQ(dp.epsilon(), 0);
  std::vector<float> v(10, 0.0f);
  for (int round = 0; round < 7; ++round)
    for (int k = 0; k < 3; ++k) dp.OnCombined(v.data(), v.size(), 1.0 / 3, k == 0);
  EXPECT_EQ(dp.rounds(), 7);
  EXPECT_DOUBLE_EQ(dp.epsilon(), dp::Epsilon(1, 1.5, 7, 1e-5));
  // A resumed run counts every step before its checkpoint.
  dp.CountEarlierRounds(5);
  EXPECT_DOUBLE_EQ(dp.epsilon(), dp::Epsilon(1, 1.5, 12, 1e-5));
}

TEST(DpAggregate, WorkersAddingTheNoiseEachGetTheirShareAndTheHubAddsNone) {
  DpAggregate dp(Settings(DpNoiseAt::kWorkers), 4);
  EXPECT_DOUBLE_EQ(dp.ForWorkers().noise_stddev(), 1.5 * 2 / 2);  // sigma C / sqrt(4)
  std::vector<float> v(1000, 0.5f);
  dp.OnCombined(v.data(), v.size(), 0.25, true);
  EXPECT_EQ(v, std::vector<float>(1000, 0.5f));
  EXPECT_EQ(dp.rounds(), 1);
}

TEST(DpAggregate, OffDoesNothing) {
  DpAggregate dp(DpSettings{}, 3);
  std::vector<float> v(10, 0.5f);
  dp.OnCombined(v.data(), v.size(), 1, true);
  EXPECT_EQ(v, std::vector<float>(10, 0.5f));
  EXPECT_EQ(dp.rounds(), 0);
  EXPECT_FALSE(dp.ForWorkers().clip() > 0);
}

}  // namespace
}  // namespace mt
