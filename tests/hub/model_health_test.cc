// The hub's own end-of-run check (hub/evaluation/model_health.h): a test
// loss far above the training loss reached is a model that lost what it
// learned. Chance and collapse: tests/core/model_health_test.cc.
#include "hub/evaluation/model_health.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

namespace mt {
namespace {

using ::testing::HasSubstr;

TrainLossTrend Trend(const std::vector<double>& losses) {
  TrainLossTrend t;
  for (double l : losses) t.Add(64 * l, 64);
  return t;
}

TEST(LostLearning, ATestLossFarAboveTheTrainingLossReachedFails) {
  // One of two workers adding a constant bias in issue 32's bench: the
  // training loss had come down near 0.5, the final test loss was 2.04.
  std::vector<double> losses(300, 0.5);
  for (int i = 0; i < 20; ++i) losses[i] = 2.3 - 0.09 * i;
  const TrainLossTrend t = Trend(losses);
  EXPECT_NEAR(t.best, 0.5, 0.01);
  EXPECT_THAT(LostLearningReason(t, 2.04, 10), HasSubstr("the model collapsed"));
  EXPECT_EQ(LostLearningReason(t, 0.6, 10), "") << "a generalisation gap";
  EXPECT_EQ(LostLearningReason(t, -1, 10), "") << "not evaluated";
}

TEST(LostLearning, ShortOrEasyRunsPass) {
  // Fewer steps than the warm-up: no best yet.
  EXPECT_EQ(LostLearningReason(Trend(std::vector<double>(10, 2.0)), 2.3, 10), "");
  // A training loss near 0 and a small test loss (a separable test set):
  // twice 0 is exceeded, but the test loss is far below a uniform guess's.
  EXPECT_EQ(LostLearningReason(Trend(std::vector<double>(100, 0.001)), 0.05, 10), "");
}

}  // namespace
}  // namespace mt
