#include "core/train/step_history.h"

#include <gtest/gtest.h>

namespace mt {
namespace {

StepSample Step(int64_t step, double loss, double ms = 10) {
  StepSample s;
  s.step = step;
  s.seconds = 0.01 * static_cast<double>(step);
  s.loss_sum = loss * 8;
  s.samples = 8;
  s.wall_ms = ms;
  return s;
}

TEST(StepHistory, KeepsEveryStepUntilFull) {
  StepHistory h(4);
  for (int64_t i = 1; i <= 4; ++i) ASSERT_NE(h.Add(Step(i, static_cast<double>(i))), nullptr);
  ASSERT_EQ(h.points().size(), 4u);
  EXPECT_EQ(h.stride(), 1);
  EXPECT_DOUBLE_EQ(h.points()[2].loss, 3.0);
  EXPECT_EQ(h.points()[2].step, 3);
}

TEST(StepHistory, StaysBoundedAndCoversTheWholeRun) {
  StepHistory h(8);
  double total_loss = 0;
  for (int64_t i = 1; i <= 1000; ++i) {
    h.Add(Step(i, static_cast<double>(i % 7)));
    total_loss += static_cast<double>(i % 7);
  }
  ASSERT_LE(h.points().size(), 8u);
  EXPECT_GE(h.points().size(), 4u);
  // Every step is in exactly one point (but those still pending), in order.
  int64_t covered = 0, last = 0;
  double loss_sum = 0;
  for (const StepPoint& p : h.points()) {
    EXPECT_GT(p.step, last);
    last = p.step;
    covered += p.steps;
    loss_sum += p.loss * static_cast<double>(p.samples) / 8;
    EXPECT_EQ(p.samples, 8 * p.steps);
  }
  EXPECT_EQ(covered, last);
  EXPECT_GT(last, 1000 - h.stride());
  // Means over the points' steps, not samples of single steps: the sums agree.
  double expected = 0;
  for (int64_t i = 1; i <= last; ++i) expected += static_cast<double>(i % 7);
  EXPECT_NEAR(loss_sum, expected, 1e-6 * expected);
}

TEST(StepHistory, MeansStepTimeAndRateOverThePoint) {
  StepHistory h(2);
  h.Add(Step(1, 1, 10));
  h.Add(Step(2, 1, 30));
  h.Add(Step(3, 1, 50));  // full: the first two merge, the stride becomes 2
  EXPECT_EQ(h.stride(), 2);
  ASSERT_EQ(h.points().size(), 2u);
  EXPECT_DOUBLE_EQ(h.points()[0].step_ms, 20.0);
  EXPECT_EQ(h.points()[0].steps, 2);
  const ReportJson j = h.ToJson();
  EXPECT_EQ(j["stride"], 2);
  ASSERT_EQ(j["points"].size(), 2u);
  // 16 samples over the 0.02 s the first two steps took.
  EXPECT_NEAR(j["points"][0]["samples_per_second"].get<double>(), 800.0, 1e-6);
}

TEST(StepHistory, ACallerFillsBatchesOfTheClosedPoint) {
  StepHistory h(4);
  StepPoint* p = h.Add(Step(1, 1));
  ASSERT_NE(p, nullptr);
  p->batches = {{"a", 40}, {"b", 24}};
  const ReportJson j = h.ToJson();
  EXPECT_EQ(j["points"][0]["batches"]["a"], 40);
  EXPECT_EQ(j["points"][0]["batches"]["b"], 24);
}

TEST(StepHistory, RefusesAStepCoveringNothing) {
  StepHistory h;
  StepSample s = Step(1, 1);
  s.steps = 0;
  EXPECT_THROW(h.Add(s), std::invalid_argument);
}

}  // namespace
}  // namespace mt
