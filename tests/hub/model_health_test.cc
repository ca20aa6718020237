// The end-of-run check on the model (hub/evaluation/model_health.h): a model at chance
// or one that lost what it learned is no result, while a short honest run
// that is still learning, or one that wobbles, passes.
#include "hub/evaluation/model_health.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

namespace mt {
namespace {

using ::testing::HasSubstr;

EvalPoint At(int64_t step, double accuracy, double loss) {
  EvalPoint p;
  p.step = step;
  p.test_accuracy = accuracy;
  p.test_loss = loss;
  return p;
}

TEST(CollapsedModel, AModelABiasWalkedToChanceFails) {
  // Issue 32's run: accuracy 0.100 and loss 2.3028 at the end of the epoch.
  EXPECT_THAT(CollapsedModelReason({At(313, 0.0999, 2.3028)}, 10),
              HasSubstr("the model is at chance"));
  // The same after it had learned.
  EXPECT_THAT(CollapsedModelReason({At(100, 0.71, 0.8), At(313, 0.1, 2.31)}, 10),
              HasSubstr("fell to 0.100 (chance 0.100) from 0.710 at step 100"));
  // At chance with a lower loss, but it did better before.
  EXPECT_THAT(CollapsedModelReason({At(50, 0.4, 1.7), At(100, 0.12, 1.9)}, 10),
              HasSubstr("the model is at chance"));
}

TEST(CollapsedModel, LosingMoreThanHalfOfWhatItGainedFails) {
  // --aggregate median under the full bias in issue 32 ended at 0.377.
  EXPECT_THAT(CollapsedModelReason({At(100, 0.84, 0.5), At(313, 0.377, 1.6)}, 10),
              HasSubstr("the model collapsed"));
}

TEST(CollapsedModel, HonestRunsPass) {
  EXPECT_EQ(CollapsedModelReason({}, 10), "") << "nothing evaluated";
  EXPECT_EQ(CollapsedModelReason({At(313, 0.86, 0.4)}, 10), "");
  // A short run, still near chance but learning: its loss is below a
  // uniform guess's.
  EXPECT_EQ(CollapsedModelReason({At(5, 0.13, 2.0)}, 10), "");
  // Wobbles that keep most of the gain.
  EXPECT_EQ(CollapsedModelReason({At(100, 0.80, 0.6), At(200, 0.62, 1.0), At(300, 0.75, 0.7)}, 10),
            "");
  // Two classes: chance 0.5.
  EXPECT_EQ(CollapsedModelReason({At(10, 0.9, 0.3)}, 2), "");
  EXPECT_THAT(CollapsedModelReason({At(10, 0.5, 0.6932)}, 2), HasSubstr("at chance"));
}

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
