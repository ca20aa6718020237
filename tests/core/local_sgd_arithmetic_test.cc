// Local SGD's arithmetic (core/train/local_sgd.h), which hub and workers
// share: the round's change, the average added back, look-ahead moved onto
// the average, and the outer optimizer that refuses to overflow.
#include "core/train/local_sgd.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <vector>

namespace mt {
namespace {

TEST(LocalSgdArithmetic, TheAveragedChangeLandsOnTheRoundsStart) {
  const std::vector<float> start = {1.0f, -2.0f, 0.5f};
  const std::vector<float> end = {1.25f, -2.5f, 0.5f};
  std::vector<float> change(3);
  local_sgd::RoundChange(end.data(), start.data(), 3, change.data());
  EXPECT_EQ(change, (std::vector<float>{0.25f, -0.5f, 0.0f}));
  // One worker: its own change comes back and takes it to where it was.
  std::vector<float> weights = start;
  local_sgd::AddChange(weights.data(), change.data(), 3);
  EXPECT_EQ(weights, end);
}

TEST(LocalSgdArithmetic, StepsTakenAheadMoveOntoTheAverage) {
  const std::vector<float> anchor = {10.0f, 20.0f};  // the averaged weights
  const std::vector<float> sent = {1.0f, 2.0f};      // when the change left
  const std::vector<float> now = {1.5f, 1.0f};       // after the steps ahead
  std::vector<float> out(2);
  local_sgd::MoveOnto(anchor.data(), now.data(), sent.data(), 2, out.data());
  EXPECT_EQ(out, (std::vector<float>{10.5f, 19.0f}));
}

TEST(LocalSgdArithmetic, TheOuterStepScalesWithoutMomentumAndAccumulatesWithIt) {
  std::vector<float> change = {1.0f, -2.0f};
  ASSERT_TRUE(local_sgd::OuterStep(change.data(), nullptr, 2, 0.5f, 0.0f));
  EXPECT_EQ(change, (std::vector<float>{0.5f, -1.0f}));

  std::vector<float> velocity = {0.0f, 0.0f};
  change = {1.0f, -2.0f};
  ASSERT_TRUE(local_sgd::OuterStep(change.data(), velocity.data(), 2, 0.5f, 0.75f));
  EXPECT_EQ(velocity, (std::vector<float>{1.0f, -2.0f}));
  EXPECT_EQ(change, (std::vector<float>{0.5f, -1.0f}));
  change = {1.0f, -2.0f};
  ASSERT_TRUE(local_sgd::OuterStep(change.data(), velocity.data(), 2, 0.5f, 0.75f));
  EXPECT_EQ(velocity, (std::vector<float>{1.75f, -3.5f}));
  EXPECT_EQ(change, (std::vector<float>{0.875f, -1.75f}));
}

TEST(LocalSgdArithmetic, AnOuterStepThatWouldOverflowChangesNothing) {
  std::vector<float> velocity = {FLT_MAX, 1.0f};
  std::vector<float> change = {FLT_MAX, 1.0f};  // the first would overflow v
  EXPECT_FALSE(local_sgd::OuterStep(change.data(), velocity.data(), 2, 1.0f, 0.9f));
  EXPECT_EQ(velocity, (std::vector<float>{FLT_MAX, 1.0f}));
  EXPECT_EQ(change, (std::vector<float>{FLT_MAX, 1.0f}));
  // Finite v, but lr * v is not.
  change = {FLT_MAX, 1.0f};
  EXPECT_FALSE(local_sgd::OuterStep(change.data(), nullptr, 2, 4.0f, 0.0f));
  EXPECT_EQ(change, (std::vector<float>{FLT_MAX, 1.0f}));
}

}  // namespace
}  // namespace mt
