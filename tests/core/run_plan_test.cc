// RunPlan's arithmetic where the batch changes before the first step (a
// hub whose global batch follows its devices): the same run, counted anew.
#include "core/train/run_plan.h"

#include <gtest/gtest.h>

namespace mt {
namespace {

TEST(RunPlan, WithBatchKeepsTheEpochsAndCountsStepsOfTheNewBatch) {
  const RunPlan at128(60000, 128, 2, 0);
  EXPECT_EQ(at128.total_steps(), 2 * 469);
  const RunPlan at77 = at128.WithBatch(77);
  EXPECT_EQ(at77.batch(), 77);
  EXPECT_EQ(at77.epochs(), 2);
  EXPECT_EQ(at77.steps_per_epoch(), 780);  // 779 of 77 and a last one of 17
  EXPECT_EQ(at77.total_steps(), 2 * 780);
  EXPECT_EQ(at77.BatchAt(779), 60000 - 779 * 77);
  EXPECT_EQ(at77.EpochOf(780), 1);
  EXPECT_EQ(at77.FirstSample(781), 77);
}

TEST(RunPlan, WithBatchKeepsAStepCountAndItsEpochsAsGiven) {
  // --steps alone: as many epochs as the steps need, at the new batch too.
  const RunPlan steps_only(1000, 100, 0, 25);
  EXPECT_EQ(steps_only.epochs(), 3);
  const RunPlan smaller = steps_only.WithBatch(50);
  EXPECT_EQ(smaller.total_steps(), 25);
  EXPECT_EQ(smaller.epochs(), 2);
  // --steps within --epochs stays so.
  const RunPlan both = RunPlan(1000, 100, 4, 30).WithBatch(40);
  EXPECT_EQ(both.total_steps(), 30);
  EXPECT_EQ(both.epochs(), 4);
}

}  // namespace
}  // namespace mt
