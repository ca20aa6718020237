// --sync-every auto alone, fed simulated rounds: a round of H steps costs
// H * compute plus one exchange.
#include "hub/policy/sync_period.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/util/rng.h"

namespace mt {
namespace {

// Feeds `rounds` rounds of a network where an exchange costs exchange_ms
// and a step's compute step_ms; returns every H chosen along the way.
std::vector<int> Feed(SyncPeriod& p, int rounds, double exchange_ms, double step_ms) {
  std::vector<int> chosen;
  for (int r = 0; r < rounds; ++r) {
    const double compute = step_ms * p.steps();
    if (p.Observe(p.steps(), compute + exchange_ms, compute)) chosen.push_back(p.steps());
  }
  return chosen;
}

TEST(SyncPeriod, FixedNeverChanges) {
  SyncPeriod one(1), eight(8);
  EXPECT_TRUE(Feed(one, 50, 500, 1).empty());
  EXPECT_TRUE(Feed(eight, 50, 500, 1).empty());
  EXPECT_EQ(one.steps(), 1);
  EXPECT_FALSE(one.local());
  EXPECT_EQ(eight.steps(), 8);
  EXPECT_TRUE(eight.local());
}

TEST(SyncPeriod, StaysExactOnAFastNetworkEvenWhenTheExchangeIsMostOfAStep) {
  // Loopback: a 1 ms exchange next to 2 ms of compute is a third of the
  // step, but not worth leaving the exact mode for.
  SyncPeriod p(0);
  EXPECT_TRUE(p.automatic());
  EXPECT_TRUE(Feed(p, 200, 1.0, 2.0).empty());
  // Nor is 15 ms, as loopback takes on a machine busy with other work.
  EXPECT_TRUE(Feed(p, 200, 15.0, 2.0).empty());
  EXPECT_EQ(p.steps(), 1);
  EXPECT_FALSE(p.local());
}

TEST(SyncPeriod, UnderALossyEncodingAFastPerStepExchangeIsNoReasonToStayPerStep) {
  // Three phones over shared 32 Mbit/s went to topk at step 2: per-step
  // exchanges of 15-19 ms against 25 ms of compute, under the fast line,
  // kept them per-step for a whole run (0.81x one phone alone). Inexact
  // anyway, they take rounds (Adam's ceiling of 4 here).
  SyncPeriod lossy(0, false, 4);
  lossy.ForgetExchange(/*lossless=*/false);
  Feed(lossy, 20, 17, 25);
  EXPECT_EQ(lossy.steps(), 4);
  // The same exchange uncompressed is exact per-step, and stays so.
  SyncPeriod exact(0, false, 4);
  EXPECT_TRUE(Feed(exact, 20, 17, 25).empty());
  EXPECT_EQ(exact.steps(), 1);
  // A lossy per-step exchange well within the line (a LAN) stays per-step.
  SyncPeriod lan(0, false, 4);
  lan.ForgetExchange(/*lossless=*/false);
  EXPECT_TRUE(Feed(lan, 20, 4, 25).empty());
}

TEST(SyncPeriod, ASoleParticipantsRoundsGoPastTheOptimizersCeilingAndComeBackAtOnce) {
  // Adam's ceiling is 4, for the averaging's sake; a round of one worker is
  // its own training, and 60 ms exchanges against 5 ms steps call for 64.
  SyncPeriod p(0, false, 4);
  EXPECT_FALSE(p.SetSoleParticipant(true));
  Feed(p, 40, 60, 5);
  EXPECT_EQ(p.steps(), SyncPeriod::kMax);
  // Another worker is back: the ceiling holds from the next round on.
  EXPECT_TRUE(p.SetSoleParticipant(false));
  EXPECT_EQ(p.steps(), 4);
  EXPECT_FALSE(p.SetSoleParticipant(false));
  Feed(p, 40, 60, 5);
  EXPECT_EQ(p.steps(), 4);
  // A fixed --sync-every is never moved.
  SyncPeriod fixed(16, false, 4);
  EXPECT_FALSE(fixed.SetSoleParticipant(false));
  EXPECT_EQ(fixed.steps(), 16);
}

TEST(SyncPeriod, RisesSoTheExchangeIsATwentiethOfTheRound) {
  // Wi-Fi: 60 ms per exchange, 5 ms per step: 19 * 60 / 5 = 228 -> capped.
  SyncPeriod capped(0);
  Feed(capped, 20, 60, 5);
  EXPECT_EQ(capped.steps(), SyncPeriod::kMax);
  EXPECT_TRUE(capped.local());
  // 30 ms per exchange, 10 ms per step: H = 57, and then the exchange is
  // 30 / (30 + 570) = a twentieth of the round.
  SyncPeriod p(0);
  const std::vector<int> chosen = Feed(p, 20, 30, 10);
  ASSERT_EQ(chosen.size(), 1u);  // one move, no oscillation
  EXPECT_EQ(p.steps(), 57);
  EXPECT_NEAR(p.exchange_ms(), 30, 1e-9);
  EXPECT_NEAR(p.step_compute_ms(), 10, 1e-9);
}

TEST(SyncPeriod, WithAdamRoundsStayShort) {
  // The same Wi-Fi for workers optimizing with Adam: rounds of 4 steps at
  // most, where three workers needed a third fewer samples than at 16.
  EXPECT_EQ(SyncPeriod::AutoRoundCeiling(OptimizerKind::kSgd), SyncPeriod::kMax);
  const int adam = SyncPeriod::AutoRoundCeiling(OptimizerKind::kAdam);
  EXPECT_EQ(adam, 4);
  SyncPeriod p(0, false, adam);
  Feed(p, 40, 30, 10);
  EXPECT_EQ(p.steps(), 4);
  EXPECT_TRUE(p.local());
  // Still exact on a fast network, and a fixed H is not capped.
  SyncPeriod lan(0, false, adam);
  EXPECT_TRUE(Feed(lan, 100, 1.0, 2.0).empty());
  SyncPeriod fixed(16, false, adam);
  EXPECT_EQ(fixed.steps(), 16);
}

TEST(SyncPeriod, RoundsThatHideASlowWorkersExchangeDoNotSendItBackToPerStep) {
  // A pair over Wi-Fi with Adam's ceiling of 4, as measured: per step the
  // exchange takes 70 ms, in rounds it measures under the fast line (9.8
  // ms), the slow phone's compute hiding it. Going back to per-step
  // exchanges would bring the 70 ms back: it stays in rounds.
  SyncPeriod p(0, false, 4);
  std::vector<int> chosen;
  for (int r = 0; r < 400; ++r) {
    const double exchange = p.steps() > 1 ? 9.8 : 70;
    const double compute = 50.0 * p.steps();
    if (p.Observe(p.steps(), compute + exchange, compute)) chosen.push_back(p.steps());
  }
  EXPECT_EQ(chosen, std::vector<int>{4});
}

TEST(SyncPeriod, AfterALossyEncodingChangeFastRoundsKeepTheirLength) {
  // A pair at H 4 whose encoding moved from topk to int8: its per-step
  // exchanges at int8 were never measured, and the rounds' 8 ms hide the
  // slow phone's share. Leaving rounds would bring ~50 ms per step back.
  SyncPeriod p(0, false, 4);
  Feed(p, 10, 60, 50);
  ASSERT_EQ(p.steps(), 4);
  p.ForgetExchange(/*lossless=*/false);
  EXPECT_TRUE(Feed(p, 40, 8, 50).empty());
  EXPECT_EQ(p.steps(), 4);
  // Back to none (the network got fast): then fast rounds end them.
  p.ForgetExchange(/*lossless=*/true);
  Feed(p, 40, 3, 50);
  EXPECT_EQ(p.steps(), 1);
}

TEST(SyncPeriod, AnHThatUndoesItsLastChangeWaitsTwiceAsLong) {
  // Measurements that contradict each other: short rounds look slow
  // enough for H 17, long rounds fast enough for H 4. Each reversal
  // doubles the rounds the next decision waits for.
  SyncPeriod p(0);
  int changes = 0;
  for (int r = 0; r < 400; ++r) {
    const double exchange = p.steps() == 1 ? 30 : p.steps() < 10 ? 8.5 : 2;
    const double compute = 10.0 * p.steps();
    changes += p.Observe(p.steps(), compute + exchange, compute) ? 1 : 0;
  }
  // Undamped: a change every few rounds, well over a hundred; damped,
  // after the first few, one per kMaxSettleRounds.
  EXPECT_GE(changes, 4);
  EXPECT_LE(changes, 4 + 400 / SyncPeriod::kMaxSettleRounds);
  EXPECT_EQ(p.settle_rounds(), SyncPeriod::kMaxSettleRounds);
  // A steady link afterwards: the damping wears off.
  Feed(p, 300, 30, 25);
  EXPECT_EQ(p.settle_rounds(), SyncPeriod::kSettleRounds);
}

TEST(SyncPeriod, OneStalledRoundDoesNotLeaveTheExactMode) {
  // Loopback on a busy machine: a 2 ms exchange, and once the hub is not
  // scheduled for half a second. Smoothed, that one round reads as 150 ms
  // for a while; the rounds after it say 2 ms.
  SyncPeriod p(0);
  EXPECT_TRUE(Feed(p, 20, 2, 5).empty());
  EXPECT_FALSE(p.Observe(1, 5 + 500, 5));
  EXPECT_TRUE(Feed(p, 50, 2, 5).empty());
  EXPECT_EQ(p.steps(), 1);
  // Three stalled rounds in a row are the network's cost: H rises.
  Feed(p, SyncPeriod::kConfirmRounds, 500, 5);
  EXPECT_GT(p.steps(), 1);
}

// Counts the times H turned back the way it came (up then down, or down
// then up) in `changes`, a sequence of H values starting at 1.
int Reversals(const std::vector<int>& changes) {
  int reversals = 0, last = 0, h = 1;
  for (int next : changes) {
    const int direction = next > h ? 1 : -1;
    if (direction == -last) ++reversals;
    last = direction;
    h = next;
  }
  return reversals;
}

TEST(SyncPeriod, BusyLoopbackDoesNotMakeItFlap) {
  // A model of a 2-core machine building in parallel: a step's compute 4
  // to 24 ms as the other work comes and goes, a 2 ms exchange, and in one
  // round of ten the hub or a worker descheduled for 20 to 120 ms. Undamped,
  // 1000 steps of it went 1 -> 37 -> 14 -> 4 -> 22 -> 4 -> 42 -> 11 (seed 1):
  // five reversals (on the real loopback: 1 -> 7 -> 1 -> 6 -> 1 in 100 steps).
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Rng rng(seed);
    SyncPeriod p(0);
    std::vector<int> chosen;
    for (int64_t step = 0; step < 1000; step += p.steps()) {
      const double compute = 4.0 * (1 + 5 * rng.Uniform()) * p.steps();
      double exchange = 1.5 + rng.Uniform();
      if (rng.Uniform() < 0.1) exchange += 20 + 100 * rng.Uniform();
      if (p.Observe(p.steps(), compute + exchange, compute)) chosen.push_back(p.steps());
    }
    EXPECT_LE(Reversals(chosen), 1) << "seed " << seed;
    EXPECT_LE(chosen.size(), 3u) << "seed " << seed;
  }
}

TEST(SyncPeriod, AfterAChangeItDwellsBeforeTheNext) {
  // Over Wi-Fi to H 64 at once (every round calls for it), then the
  // network gets fast: the rounds shorten, but not before kMinDwellMs of
  // rounds at 64 have passed.
  SyncPeriod p(0);
  Feed(p, SyncPeriod::kSettleRounds, 60, 5);
  ASSERT_EQ(p.steps(), SyncPeriod::kMax);
  double spent_ms = 0;
  while (spent_ms < 0.9 * SyncPeriod::kMinDwellMs) {
    const double compute = 5.0 * p.steps();
    ASSERT_FALSE(p.Observe(p.steps(), compute + 1, compute));
    spent_ms += compute + 1;
  }
  EXPECT_FALSE(Feed(p, 40, 1, 5).empty());
  EXPECT_LT(p.steps(), SyncPeriod::kMax);
}

TEST(SyncPeriod, WaitsForSettledMeasurementsAndIgnoresNoise) {
  SyncPeriod p(0);
  EXPECT_TRUE(Feed(p, SyncPeriod::kSettleRounds - 1, 60, 5).empty());  // too early to judge
  Feed(p, 10, 60, 5);
  ASSERT_EQ(p.steps(), SyncPeriod::kMax);
  // +-30% jitter on the exchange moves the target less than 2x: H stays.
  for (int r = 0; r < 100; ++r) {
    const double exchange = 60 * (r % 2 ? 1.3 : 0.7);
    EXPECT_FALSE(p.Observe(p.steps(), 5 * p.steps() + exchange, 5 * p.steps()));
  }
}

TEST(SyncPeriod, ShortensRoundsWhenTheNetworkGetsFastAndStaysLocal) {
  SyncPeriod p(0);
  Feed(p, 10, 60, 5);
  ASSERT_EQ(p.steps(), SyncPeriod::kMax);
  // The phones moved next to the access point: the rounds shrink to what
  // hides a 1 ms exchange, but per-step exchanges measured 60 ms and a
  // round may be hiding a slow worker's share, so not to one step. (In two
  // moves, 64 -> 17 -> 4, each after kMinDwellMs at the value before.)
  Feed(p, 100, 1, 5);
  EXPECT_GE(p.steps(), 2);
  EXPECT_LE(p.steps(), 8);
  // Each worker's optimizer state is its own by now: rounds of one step
  // still exchange weight changes.
  EXPECT_TRUE(p.local());
}

TEST(SyncPeriod, LeavesRoundsOnlyWellBelowTheFastLine) {
  // An exchange just under kFastExchangeMs (topk over Wi-Fi) keeps the
  // rounds it has; only one under half of it is fast enough to give them up
  // (once the encoding is back at none, so per-step exchanges are known
  // not to be slower than rounds show).
  SyncPeriod p(0);
  Feed(p, 10, 60, 30);
  ASSERT_GT(p.steps(), 1);
  p.ForgetExchange(/*lossless=*/true);
  Feed(p, 40, 15, 30);  // may shorten the rounds (to 10), never to 1
  EXPECT_GT(p.steps(), 1);
  Feed(p, 40, 5, 30);
  EXPECT_EQ(p.steps(), 1);
  // And from 1, it needs kFastExchangeMs to leave again.
  EXPECT_TRUE(Feed(p, 40, 15, 30).empty());
  EXPECT_EQ(p.steps(), 1);
}

TEST(SyncPeriod, IgnoresRoundsThatMeasureNothing) {
  SyncPeriod p(0);
  EXPECT_FALSE(p.Observe(0, 100, 1));
  EXPECT_FALSE(p.Observe(1, 0, 0));
  EXPECT_FALSE(p.Observe(1, -5, 1));
  EXPECT_LT(p.exchange_ms(), 0);
  // Compute longer than the round (clocks of two machines): no negative
  // exchange, so H stays.
  EXPECT_TRUE(Feed(p, 20, -3, 5).empty());
  EXPECT_EQ(p.steps(), 1);
  EXPECT_GE(p.exchange_ms(), 0);
}

TEST(SyncPeriod, WithOverlapTheWorkersViewOfTheExchangeKeepsRoundsLong) {
  // Once rounds overlap their exchange, a round takes about its compute at
  // the hub: read from there, the exchange would seem free and H would
  // fall back to 1. The workers still see 60 ms per exchange.
  SyncPeriod p(0, /*overlap=*/true);
  Feed(p, 10, 60, 5);
  ASSERT_EQ(p.steps(), SyncPeriod::kMax);
  for (int r = 0; r < 50; ++r) {
    const double compute = 5.0 * p.steps();
    p.Observe(p.steps(), compute + 1, compute, 60);
  }
  EXPECT_EQ(p.steps(), SyncPeriod::kMax);
  EXPECT_NEAR(p.exchange_ms(), 60, 1e-6);
  // Without overlap the same reports are ignored: the hub's own round time
  // is the exchange, and the rounds shrink (not to one step: per-step
  // exchanges measured 60 ms).
  SyncPeriod q(0);
  Feed(q, 10, 60, 5);
  for (int r = 0; r < 100; ++r) {
    const double compute = 5.0 * q.steps();
    q.Observe(q.steps(), compute + 1, compute, 60);
  }
  EXPECT_LE(q.steps(), 8);
}

}  // namespace
}  // namespace mt
