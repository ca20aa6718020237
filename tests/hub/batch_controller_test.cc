// The batch controller alone, driven by simulated devices: speeds, caps,
// joins and noise, checking the invariants the hub relies on.
#include "hub/policy/batch_controller.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>

#include "hub/policy/batch_split.h"

namespace mt {
namespace {

using Members = std::vector<BatchController::Member>;

int Sum(const std::vector<int>& v) { return std::accumulate(v.begin(), v.end(), 0); }

// One simulated step: each worker takes batch * ms_per_sample (times noise)
// plus a fixed overhead.
void Simulate(BatchController& c, const Members& m, const std::vector<int>& batches,
              const std::vector<double>& ms, const std::vector<double>& overhead,
              std::mt19937* rng = nullptr, double noise = 0) {
  std::uniform_real_distribution<double> jitter(1 - noise, 1 + noise);
  for (size_t i = 0; i < m.size(); ++i) {
    const double compute = batches[i] * ms[i] * (rng ? jitter(*rng) : 1.0);
    c.Observe(m[i].worker, batches[i], compute, compute + overhead[i]);
  }
}

TEST(SplitBatch, KeepsTheTotalAndFollowsTheTargets) {
  EXPECT_EQ(SplitBatch(192, {1, 1, 1}), (std::vector<int>{64, 64, 64}));
  EXPECT_EQ(SplitBatch(64, {16, 32, 16}), (std::vector<int>{16, 32, 16}));
  EXPECT_EQ(Sum(SplitBatch(100, {1, 1, 1})), 100);
  EXPECT_EQ(SplitBatch(10, {1, 0, 0}), (std::vector<int>{8, 1, 1}));  // everyone gets one
  EXPECT_EQ(Sum(SplitBatch(2, {1, 1, 1})), 2);                        // fewer samples than workers
}

TEST(SplitBatch, RespectsCapsAndGivesTheRestToOthers) {
  EXPECT_EQ(SplitBatch(192, {1, 1, 1}, {30, 1000, 1000}), (std::vector<int>{30, 81, 81}));
  // Caps that hold less than the total: everyone at its cap.
  EXPECT_EQ(SplitBatch(192, {1, 1}, {50, 60}), (std::vector<int>{50, 60}));
}

TEST(BatchController, SpeedsOneOneFourConvergeToFourFourOne) {
  BatchController c(BatchPolicy::kBalanced);
  const Members m = {{0, 192}, {1, 192}, {2, 192}};
  const std::vector<double> ms = {1, 1, 4}, overhead = {0, 0, 0};
  std::vector<int> b = c.Next(192, m);
  EXPECT_EQ(b, (std::vector<int>{64, 64, 64}));  // nothing measured yet
  for (int step = 0; step < 6; ++step) {
    Simulate(c, m, b, ms, overhead);
    b = c.Next(192, m);
    ASSERT_EQ(Sum(b), 192);
  }
  // 4:4:1 of 192 is 85.3, 85.3, 21.3.
  EXPECT_NEAR(b[0], 85.3, 3);
  EXPECT_NEAR(b[1], 85.3, 3);
  EXPECT_NEAR(b[2], 21.3, 3);
  EXPECT_NEAR(c.ms_per_sample(2), 4.0, 1e-9);
}

TEST(BatchController, OverheadCountsAgainstAWorker) {
  // Same speed, but one worker spends 20 ms per step moving its gradient:
  // it gets fewer samples so both finish together.
  BatchController c(BatchPolicy::kBalanced);
  const Members m = {{0, 1000}, {1, 1000}};
  std::vector<int> b = c.Next(100, m);
  for (int step = 0; step < 20; ++step) {
    Simulate(c, m, b, {1, 1}, {0, 20});
    b = c.Next(100, m);
  }
  EXPECT_NEAR(b[0], 60, 4);
  EXPECT_NEAR(b[1], 40, 4);
}

TEST(BatchController, DoesNotOscillateUnderNoise) {
  BatchController c(BatchPolicy::kBalanced);
  const Members m = {{0, 192}, {1, 192}, {2, 192}};
  const std::vector<double> ms = {1, 1, 4}, overhead = {0.5, 0.5, 0.5};
  std::mt19937 rng(7);
  std::vector<int> b = c.Next(192, m);
  for (int step = 0; step < 10; ++step) {
    Simulate(c, m, b, ms, overhead, &rng, 0.1);
    b = c.Next(192, m);
  }
  // Once settled, +-10% timing noise moves the slow worker's batch rarely
  // and never far.
  int changes = 0;
  const int settled = b[2];
  for (int step = 0; step < 100; ++step) {
    Simulate(c, m, b, ms, overhead, &rng, 0.1);
    const std::vector<int> next = c.Next(192, m);
    ASSERT_EQ(Sum(next), 192);
    changes += next != b;
    EXPECT_LE(std::abs(next[2] - settled), 4) << "step " << step;
    b = next;
  }
  EXPECT_LE(changes, 10);
}

TEST(BatchController, RespectsMemoryCaps) {
  BatchController c(BatchPolicy::kBalanced);
  // The fast worker can hold only 40 samples.
  const Members m = {{0, 40}, {1, 192}, {2, 192}};
  std::vector<int> b = c.Next(192, m);
  for (int step = 0; step < 30; ++step) {
    ASSERT_LE(b[0], 40);
    Simulate(c, m, b, {0.5, 1, 1}, {0, 0, 0});
    b = c.Next(192, m);
    ASSERT_EQ(Sum(b), 192);
  }
  EXPECT_EQ(b[0], 40);
  EXPECT_NEAR(b[1], 76, 2);
  EXPECT_NEAR(b[2], 76, 2);
}

TEST(BatchController, NeverChangesTheGlobalBatch) {
  std::mt19937 rng(11);
  BatchController c(BatchPolicy::kBalanced);
  for (int step = 0; step < 500; ++step) {
    // Members come and go; speeds and caps vary widely.
    Members m;
    const int n = 1 + static_cast<int>(rng() % 6);
    int cap_sum = 0;
    for (int i = 0; i < n; ++i) {
      m.push_back({static_cast<int>(rng() % 8), 1 + static_cast<int>(rng() % 300)});
      cap_sum += m.back().cap;
    }
    std::sort(m.begin(), m.end(), [](auto& a, auto& b) { return a.worker < b.worker; });
    m.erase(std::unique(m.begin(), m.end(), [](auto& a, auto& b) { return a.worker == b.worker; }),
            m.end());
    cap_sum = 0;
    for (auto& x : m) cap_sum += x.cap;
    const int total = 1 + static_cast<int>(rng() % 400);
    const std::vector<int> b = c.Next(total, m);
    ASSERT_EQ(Sum(b), std::min(total, cap_sum));
    for (size_t i = 0; i < m.size(); ++i) {
      ASSERT_LE(b[i], m[i].cap);
      if (total >= static_cast<int>(m.size())) {
        ASSERT_GE(b[i], 1);
      }
      c.Observe(m[i].worker, std::max(1, b[i]), std::max(1, b[i]) * (0.1 + m[i].worker), -1);
    }
  }
}

TEST(BatchController, ANewWorkerIsTakenToBeAverageUntilMeasured) {
  BatchController c(BatchPolicy::kBalanced);
  c.Observe(0, 50, 50, -1);   // 1 ms per sample
  c.Observe(1, 50, 150, -1);  // 3 ms per sample
  const std::vector<int> b = c.Next(120, {{0, 1000}, {1, 1000}, {2, 1000}});
  // Worker 2 is assumed at 2 ms per sample: shares 1 : 1/3 : 1/2.
  EXPECT_NEAR(b[0], 65.5, 1.5);
  EXPECT_NEAR(b[1], 21.8, 1.5);
  EXPECT_NEAR(b[2], 32.7, 1.5);
  c.Forget(1);
  EXPECT_LT(c.ms_per_sample(1), 0);
}

TEST(BatchController, FixedPolicyKeepsTheShares) {
  BatchController c(BatchPolicy::kFixed);
  const Members m = {{0, 1000, 16}, {1, 1000, 32}, {2, 1000, 16}};
  for (int step = 0; step < 5; ++step) {
    EXPECT_EQ(c.Next(64, m), (std::vector<int>{16, 32, 16}));
    Simulate(c, m, {16, 32, 16}, {1, 1, 10}, {0, 0, 0});
  }
}

TEST(BatchController, LocalStepsGetAFloorEvenForAVerySlowDevice) {
  // A device 40x slower: balanced alone it ends with a handful of
  // samples (3 of 128), too few for local optimizer steps.
  const Members m = {{0, 1024, 1}, {1, 1024, 1}};
  const std::vector<double> ms = {0.5, 20.0}, overhead = {0, 0};
  for (int floor : {1, BatchController::kMinLocalBatch}) {
    BatchController c(BatchPolicy::kBalanced);
    std::vector<int> b = {64, 64};
    for (int round = 0; round < 60; ++round) {
      Simulate(c, m, b, ms, overhead);
      b = c.Next(128, m, 4, floor);
      ASSERT_EQ(Sum(b), 128);
    }
    if (floor == 1)
      EXPECT_LT(b[1], 6) << b[0] << "," << b[1];
    else
      EXPECT_GE(b[1], BatchController::kMinLocalBatch - 1) << b[0] << "," << b[1];
  }
  // Never above an equal share: two workers of 12 samples keep 6 each.
  BatchController c(BatchPolicy::kBalanced);
  std::vector<int> b = {6, 6};
  for (int round = 0; round < 20; ++round) {
    Simulate(c, m, b, ms, overhead);
    b = c.Next(12, m, 4, BatchController::kMinLocalBatch);
  }
  EXPECT_EQ(b, (std::vector<int>{6, 6}));
}

TEST(BatchController, AWorkersOwnComputeTimeIsOnlyABoundedHint) {
  // Three devices equally fast (1 ms a sample, no network cost); the third
  // claims each step took it 0.01 ms. The hub's own round trip bounds the
  // claim: it cannot win much more than its share (before the bound it won
  // two thirds of all samples).
  const Members m = {{0, 1024, 1}, {1, 1024, 1}, {2, 1024, 1}};
  BatchController c(BatchPolicy::kBalanced);
  std::vector<int> b = {64, 64, 64};
  for (int step = 0; step < 200; ++step) {
    for (size_t i = 0; i < 3; ++i) {
      const double took = b[i] * 1.0;  // what the hub measures
      c.Observe(m[i].worker, b[i], i == 2 ? 0.01 : took, took);
    }
    b = c.Next(192, m);
    ASSERT_EQ(Sum(b), 192);
  }
  EXPECT_LE(b[2], 80) << b[0] << "," << b[1] << "," << b[2];
  EXPECT_GE(c.ms_per_sample(2), BatchController::kMinComputeShare * 0.9);
}

}  // namespace
}  // namespace mt

namespace mt {
namespace {

TEST(BatchControllerFollowingTotal, TheFastestTakesItsShareAndTheOthersWhatTheyComputeMeanwhile) {
  BatchController c(BatchPolicy::kBalanced);
  const Members three = {{1, 128}, {2, 128}, {3, 128}};
  EXPECT_EQ(c.FollowingTotal(64, three), 0);  // nobody timed yet
  c.Hint(1, 0.3);
  c.Hint(2, 0.3);
  EXPECT_EQ(c.FollowingTotal(64, three), 0);  // worker 3 has not
  c.Hint(3, 1.5);                             // 5x slower: 64 / 5 = 12.8
  EXPECT_EQ(c.FollowingTotal(64, three), 64 + 64 + 13);
  // Equal devices keep 64 each; the order does not matter.
  const Members others = {{4, 128}, {5, 128}, {6, 128}};
  for (int w : {4, 5, 6}) c.Hint(w, 0.5);
  EXPECT_EQ(c.FollowingTotal(64, others), 192);
}

TEST(BatchControllerFollowingTotal, OneUncheckedClaimDoesNotSetTheGroupsBatch) {
  // Issue 45, finding 9: one worker claimed 1e-30 ms per sample and the
  // two honest ones took one sample each (66 instead of 192). Whatever one
  // worker claims, the others are measured against the speed two claim.
  for (double claim : {1e-30, 1e-5, 0.01}) {
    BatchController c(BatchPolicy::kBalanced);
    c.Hint(1, 0.5);
    c.Hint(2, 0.5);
    c.Hint(3, claim);
    EXPECT_EQ(c.FollowingTotal(64, {{1, 128}, {2, 128}, {3, 128}}), 192) << claim;
  }
  // A pair, where nothing tells a phone from a liar's victim, believes the
  // faster claim up to 8x the slower: 1x + 5x trains 64 + 13 ...
  BatchController pair(BatchPolicy::kBalanced);
  pair.Hint(1, 0.3);
  pair.Hint(2, 1.5);
  EXPECT_EQ(pair.FollowingTotal(64, {{1, 128}, {2, 128}}), 64 + 13);
  // ... and a partner's lie leaves the honest one 8 (a local step's floor).
  for (double claim : {1e-30, 1e-5, 0.01}) {
    BatchController lied(BatchPolicy::kBalanced);
    lied.Hint(1, 0.5);
    lied.Hint(2, claim);
    EXPECT_EQ(lied.FollowingTotal(64, {{1, 128}, {2, 128}}), 8 + 64) << claim;
  }
}

TEST(BatchControllerFollowingTotal, AClaimFasterThanTheModelsArithmeticIsNotBelieved) {
  BatchController c(BatchPolicy::kBalanced);
  c.SetHintFloor(1e-6);
  EXPECT_FALSE(c.Hint(3, 1e-30));
  EXPECT_LT(c.hint(3), 0);
  EXPECT_TRUE(c.Hint(1, 0.5));
  EXPECT_TRUE(c.Hint(2, 0.5));
  // Not believed is as good as not sent: the batch stays as planned.
  EXPECT_EQ(c.FollowingTotal(64, {{1, 128}, {2, 128}, {3, 128}}), 0);
  // And a later claim replaces an earlier one that was believed.
  EXPECT_TRUE(c.Hint(3, 0.5));
  EXPECT_FALSE(c.Hint(3, 1e-9));
  EXPECT_LT(c.hint(3), 0);
}

TEST(BatchControllerHints, ASlowPhoneStartsSmallAndAClaimOfSpeedWinsNothingOnceMeasured) {
  BatchController c(BatchPolicy::kBalanced);
  const Members pair = {{1, 128}, {2, 128}};
  c.Hint(1, 0.3);
  c.Hint(2, 1.5);
  // Before any step is measured the hints split the batch: 5x slower, a
  // fifth as many samples as the other.
  const std::vector<int> first = c.Next(128, pair);
  EXPECT_NEAR(first[1], 128 / 6.0, 1.0) << first[0] << "," << first[1];
  // Measured, both are equally fast: the measurement overrides the hints.
  BatchController m(BatchPolicy::kBalanced);
  m.Observe(1, 64, 64.0, 64.0);
  m.Hint(2, 0.001);  // claims a thousand times the speed the hub measured of worker 1
  const std::vector<int> next = m.Next(128, pair);
  EXPECT_EQ(next, (std::vector<int>{64, 64}));
}

TEST(BatchControllerFollowingTotal, CapsBoundEachShareAndEveryoneTakesAtLeastOne) {
  BatchController c(BatchPolicy::kBalanced);
  c.Hint(1, 1.0);
  c.Hint(2, 0.5);     // the fastest: 64
  c.Hint(3, 1000.0);  // 2000x slower: still one sample
  EXPECT_EQ(c.FollowingTotal(64, {{1, 20}, {2, 128}, {3, 128}}), 20 + 64 + 1);
}

TEST(BatchControllerFollowingTotal, BadHintsAreIgnoredAndLeaversForgotten) {
  BatchController c(BatchPolicy::kBalanced);
  for (double bad : {0.0, -1.0, std::nan(""), double{INFINITY}}) c.Hint(1, bad);
  EXPECT_LT(c.hint(1), 0);
  c.Hint(1, 0.4);
  c.Hint(2, 0.4);
  EXPECT_EQ(c.FollowingTotal(64, {{1, 128}, {2, 128}}), 128);
  c.Forget(2);
  EXPECT_LT(c.hint(2), 0);
  EXPECT_EQ(c.FollowingTotal(64, {{1, 128}, {2, 128}}), 0);
}

}  // namespace
}  // namespace mt
