// Local SGD's arithmetic (core/train/local_sgd.h), which hub and workers
// share: the round's change, the average added back, look-ahead moved onto
// the average, and the outer optimizer that refuses to overflow.
#include "core/train/local_sgd.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
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

// Drift correction (UpdateDrift) on a problem solved by hand: worker i
// minimises h_i / 2 * (w - a_i)^2 with gradient steps of size lr, K a round,
// and the rounds average the changes with weights p_i. The group's optimum
// is w* = sum p_i h_i a_i / sum p_i h_i. Plain local SGD settles elsewhere
// when the curvatures differ (each worker's K steps overshoot towards its
// own a_i by its own factor); with the correction the rounds settle on w*,
// and the workers' corrections, weighted as the average is, sum to zero
// after every round (nothing is added to the model as a whole).
struct QuadraticWorkers {
  std::vector<float> h{4.0f, 1.0f, 0.25f}, a{1.0f, -2.0f, 3.0f}, p{0.5f, 0.3f, 0.2f};
  float Optimum() const {
    float num = 0, den = 0;
    for (size_t i = 0; i < h.size(); ++i) num += p[i] * h[i] * a[i], den += p[i] * h[i];
    return num / den;
  }
  // Rounds of K steps from w = 0; returns the weights after them and the
  // largest |sum p_i drift_i| seen.
  float Train(bool correct, int rounds, int k, float lr, float* drift_sum) const {
    float w = 0;
    std::vector<float> drift(h.size(), 0.0f), change(h.size());
    *drift_sum = 0;
    for (int r = 0; r < rounds; ++r) {
      float average = 0;
      for (size_t i = 0; i < h.size(); ++i) {
        float local = w;
        for (int s = 0; s < k; ++s) {
          local -= lr * h[i] * (local - a[i]);
          if (correct) local_sgd::AddChange(&local, &drift[i], 1);
        }
        local_sgd::RoundChange(&local, &w, 1, &change[i]);
        average += p[i] * change[i];
      }
      if (correct) {
        float sum = 0;
        for (size_t i = 0; i < h.size(); ++i) {
          local_sgd::UpdateDrift(&drift[i], &average, &change[i], 1, k);
          sum += p[i] * drift[i];
        }
        *drift_sum = std::max(*drift_sum, std::abs(sum));
      }
      local_sgd::AddChange(&w, &average, 1);
    }
    return w;
  }
};

TEST(LocalSgdArithmetic, DriftCorrectionSettlesOnTheGroupsOptimumAndSumsToZero) {
  const QuadraticWorkers q;
  const float optimum = q.Optimum();  // 0.6596; plain local SGD: 0.3717
  float drift_sum = 0;
  const float plain = q.Train(false, 400, 8, 0.1f, &drift_sum);
  const float corrected = q.Train(true, 400, 8, 0.1f, &drift_sum);
  EXPECT_GT(std::abs(plain - optimum), 0.1f) << "plain local SGD settles off the optimum";
  EXPECT_NEAR(corrected, optimum, 1e-4f);
  EXPECT_LT(drift_sum, 1e-6f);
  // One step a round is plain SGD on the group's loss: nothing to correct.
  EXPECT_NEAR(q.Train(false, 2000, 1, 0.1f, &drift_sum), optimum, 1e-4f);
}

}  // namespace
}  // namespace mt
