// --compress auto alone (hub/policy/compression_choice.h), fed simulated rounds on
// a link whose exchange costs latency plus bytes over a bandwidth, so each
// encoding's exchange follows from the bytes it sends.
#include "hub/policy/compression_choice.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "hub/policy/exchange_policy.h"

namespace mt {
namespace {

struct Link {
  double latency_ms;
  double none_ms;  // the bytes' time uncompressed; an encoding's is in proportion
  double Exchange(Compression c) const {
    constexpr size_t kN = 1 << 20;
    return latency_ms + none_ms * static_cast<double>(EncodedBytes(c, kN)) / (4.0 * kN);
  }
};

// Feeds `rounds` rounds; returns every encoding chosen along the way.
std::vector<Compression> Feed(CompressionChoice& c, int rounds, const Link& link, double step_ms) {
  std::vector<Compression> chosen;
  for (int r = 0; r < rounds; ++r)
    if (c.Observe(link.Exchange(c.current()), step_ms)) chosen.push_back(c.current());
  return chosen;
}

TEST(CompressionChoice, FixedNeverChanges) {
  CompressionChoice int8(Compression::kInt8);
  EXPECT_FALSE(int8.automatic());
  EXPECT_TRUE(Feed(int8, 50, Link{0, 1000}, 1).empty());
  EXPECT_EQ(int8.current(), Compression::kInt8);
}

TEST(CompressionChoice, StaysExactOnAFastNetwork) {
  CompressionChoice c(std::nullopt);
  EXPECT_TRUE(c.automatic());
  EXPECT_EQ(c.current(), Compression::kNone);
  // Loopback: ~1 ms against 2 ms of compute; and 15 ms on a busy machine.
  EXPECT_TRUE(Feed(c, 200, Link{0.2, 1.0}, 2).empty());
  EXPECT_TRUE(Feed(c, 200, Link{5, 10}, 2).empty());
  EXPECT_EQ(c.current(), Compression::kNone);
}

TEST(CompressionChoice, TakesTheLeastLossyEncodingThatFitsAShortRound) {
  // Phone-class compute, 240 ms a step: a round of 4 steps may spend
  // 0.05 / 0.95 * 960 = 50.5 ms on its exchange.
  const double step_ms = 240;
  {
    // 150 ms uncompressed: fp16's 75 does not fit, int8's ~38 does.
    CompressionChoice c(std::nullopt);
    EXPECT_EQ(Feed(c, 20, Link{0, 150}, step_ms), std::vector<Compression>{Compression::kInt8});
    EXPECT_NEAR(c.BudgetMs(), 0.05 / 0.95 * 4 * step_ms, 1e-9);
  }
  {
    // 400 ms, as three phones' LeNet-5 on a shared 32 Mbit/s: only topk fits.
    CompressionChoice c(std::nullopt);
    EXPECT_EQ(Feed(c, 20, Link{0, 400}, step_ms), std::vector<Compression>{Compression::kTopK});
    // It decided on the exchange it measured uncompressed.
    EXPECT_NEAR(c.decided_exchange_ms(), 400, 1e-9);
  }
  {
    // 80 ms: fp16's 40 fits.
    CompressionChoice c(std::nullopt);
    EXPECT_EQ(Feed(c, 20, Link{0, 80}, step_ms), std::vector<Compression>{Compression::kFp16});
  }
}

TEST(CompressionChoice, WaitsForSettledRoundsAndGoesBackOnlyWithRoomToSpare) {
  CompressionChoice c(std::nullopt);
  const double step_ms = 240;  // budget 50.5 ms
  // Not before kSettleRounds rounds have measured the link.
  for (int r = 1; r < CompressionChoice::kSettleRounds; ++r) EXPECT_FALSE(c.Observe(400, step_ms));
  EXPECT_TRUE(c.Observe(400, step_ms));
  EXPECT_EQ(c.current(), Compression::kTopK);
  // At topk (68 bytes per 256 values) the link is measured afresh. 10 ms
  // there predicts int8 at ~38: within the budget, but not within half of
  // it, so topk stays.
  EXPECT_TRUE(Feed(c, 20, Link{0, 10 * 1024 / 68.0}, step_ms).empty());
  EXPECT_EQ(c.current(), Compression::kTopK);
  // 2.5 ms predicts fp16 at ~19 and none at ~38: fp16 is within half.
  // The estimate falls from 10 ms over rounds, so it may pass through int8.
  const std::vector<Compression> back = Feed(c, 20, Link{0, 2.5 * 1024 / 68}, step_ms);
  EXPECT_EQ(c.current(), Compression::kFp16);
  ASSERT_FALSE(back.empty());
  for (size_t i = 1; i < back.size(); ++i)
    EXPECT_LT(static_cast<int>(back[i]), static_cast<int>(back[i - 1])) << "only less lossy";
  // A link that got faster still: none well within half the budget.
  EXPECT_EQ(Feed(c, 20, Link{0, 10}, step_ms), std::vector<Compression>{Compression::kNone});
}

TEST(CompressionChoice, LeavesAnExchangeFarOverTheBudgetAfterOneRound) {
  // Three phones' first uncompressed round over Wi-Fi: 370 ms against a
  // 20 ms budget (25 ms steps): no need to wait for more rounds.
  CompressionChoice c(std::nullopt);
  EXPECT_TRUE(c.Observe(370, 25));
  EXPECT_EQ(c.current(), Compression::kTopK);
  // A slow first round at topk is no reason to go back to a weaker
  // encoding before the settle rounds: that needs more than one round.
  EXPECT_FALSE(c.Observe(400, 25));
  EXPECT_EQ(c.current(), Compression::kTopK);
  // Over the budget but not far: the settle rounds stand.
  CompressionChoice near(std::nullopt);
  EXPECT_FALSE(near.Observe(100, 25));
  EXPECT_FALSE(near.Observe(100, 25));
  EXPECT_TRUE(near.Observe(100, 25));
}

TEST(CompressionChoice, OneSlowRoundAtAnEncodingDoesNotDecideForIt) {
  // Three phones over Wi-Fi, as measured: none 324 ms far over a 20 ms
  // budget, then topk, whose first round still brought the last result at
  // none (~300 ms) and whose others took 30. Averaged in, that round read
  // as topk at 162 ms, latency-bound, and int8 within 1.25x of it: back to
  // int8. The median of the rounds is 30: topk stays.
  CompressionChoice c(std::nullopt);
  ASSERT_TRUE(c.Observe(324, 25));
  ASSERT_EQ(c.current(), Compression::kTopK);
  for (double ms : {300.0, 30.0, 30.0, 30.0, 30.0, 30.0}) EXPECT_FALSE(c.Observe(ms, 25)) << ms;
  EXPECT_EQ(c.current(), Compression::kTopK);
  EXPECT_DOUBLE_EQ(c.exchange_ms(), 30);
  // Most rounds slow is the link, not an outlier: it is followed.
  CompressionChoice slow(std::nullopt);
  ASSERT_TRUE(slow.Observe(324, 25));
  bool moved = false;
  for (double ms : {300.0, 300.0, 30.0, 300.0}) moved = moved || slow.Observe(ms, 25);
  EXPECT_TRUE(moved);
  EXPECT_NE(slow.current(), Compression::kTopK);
}

TEST(CompressionChoice, AnOldFigureDoesNotBringAWeakerEncodingBack) {
  // A pair's first uncompressed rounds (370 ms) send it to topk; 100 rounds
  // later a few slow rounds at topk (400 ms) look as slow as none did. Read
  // next to that old figure, bytes would seem to cost nothing and none
  // would come back, 15 times the bytes; that figure has aged out instead.
  CompressionChoice c(std::nullopt);
  ASSERT_TRUE(c.Observe(370, 25));
  ASSERT_EQ(c.current(), Compression::kTopK);
  for (int r = 0; r < 100; ++r) c.Observe(30, 25);
  for (int r = 0; r < 10; ++r) EXPECT_FALSE(c.Observe(400, 25)) << r;
  EXPECT_EQ(c.current(), Compression::kTopK);
  // While none's figure is fresh, a link where fewer bytes did not help
  // still goes back to it (the latency-bound case).
  CompressionChoice fresh(std::nullopt);
  ASSERT_TRUE(fresh.Observe(370, 25));
  bool back = false;
  for (int r = 0; r < 10 && !back; ++r) back = fresh.Observe(400, 25);
  EXPECT_TRUE(back);
  EXPECT_EQ(fresh.current(), Compression::kNone);
}

TEST(CompressionChoice, IgnoresRoundsWithNonsenseTimes) {
  CompressionChoice c(std::nullopt);
  for (int r = 0; r < 10; ++r) {
    EXPECT_FALSE(c.Observe(-1, 240));
    EXPECT_FALSE(c.Observe(std::nan(""), 240));
    EXPECT_FALSE(c.Observe(400, -5));
  }
  EXPECT_LT(c.exchange_ms(), 0);
  EXPECT_EQ(c.current(), Compression::kNone);
}

// Rounds whose measurements contradict each other, as a pair with a slow
// phone whose steps swing 10x gave on the shaped medium (10 changes in 120
// steps): measured at topk the exchange looks so short that int8 would
// fit; measured at int8 it looks so long that only topk does. Every
// settle period would flip the choice; a change that undoes the one
// before waits twice as long each time instead.
double Contradicting(Compression c) {
  switch (c) {
    case Compression::kTopK: return 2;
    case Compression::kInt8: return 60;
    case Compression::kFp16: return 120;
    default: return 240;
  }
}

TEST(CompressionChoice, ContradictingRoundsDoNotMakeItOscillate) {
  CompressionChoice c(std::nullopt);
  int changes = 0;
  for (int r = 0; r < 400; ++r) changes += c.Observe(Contradicting(c.current()), 25) ? 1 : 0;
  // Undamped: one change per kSettleRounds rounds, 133 here.
  EXPECT_LE(changes, 20);
  EXPECT_GE(changes, 2);  // it did try int8 and come back
  EXPECT_EQ(c.settle_rounds(), CompressionChoice::kMaxSettleRounds);
}

TEST(CompressionChoice, TheWarmUpExchangesInFp16AtMost) {
  CompressionChoice topk(Compression::kTopK, /*warmup_steps=*/10);
  CompressionChoice none(Compression::kNone, 10);
  for (int64_t step = 0; step < 10; ++step) {
    topk.AtStep(step);
    none.AtStep(step);
    EXPECT_EQ(topk.current(), Compression::kFp16) << step;
    EXPECT_EQ(none.current(), Compression::kNone) << step;  // never lossier than asked
  }
  topk.AtStep(10);
  EXPECT_EQ(topk.current(), Compression::kTopK);
  // Auto on a slow link: fp16 while warming up, where it would take topk.
  CompressionChoice c(std::nullopt, 100);
  const Link slow{0, 2000};
  int64_t step = 0;
  for (; step < 100; step += 4) {
    c.AtStep(step);
    c.Observe(slow.Exchange(c.current()), 25);
    ASSERT_NE(c.current(), Compression::kInt8) << step;
    ASSERT_NE(c.current(), Compression::kTopK) << step;
  }
  EXPECT_EQ(c.current(), Compression::kFp16);
  for (; step < 400; step += 4) {
    c.AtStep(step);
    c.Observe(slow.Exchange(c.current()), 25);
  }
  EXPECT_EQ(c.current(), Compression::kTopK);
}

TEST(CompressionChoice, AfterDampingAChangedLinkIsStillFollowed) {
  CompressionChoice c(std::nullopt);
  for (int r = 0; r < 400; ++r) c.Observe(Contradicting(c.current()), 25);
  // The phone settles on a wired LAN: the choice goes back to none within
  // a bounded number of rounds, however far the damping had grown, and the
  // damping wears off.
  const std::vector<Compression> chosen =
      Feed(c, 3 * CompressionChoice::kMaxSettleRounds, Link{0.5, 1}, 25);
  ASSERT_FALSE(chosen.empty());
  EXPECT_EQ(chosen.back(), Compression::kNone);
  Feed(c, 200, Link{0.5, 1}, 25);
  EXPECT_EQ(c.settle_rounds(), CompressionChoice::kSettleRounds);
}

TEST(ExchangePolicy, FeedsBothChoicesTheSameRound) {
  // --sync-every auto and --compress auto over a slow link: the encoding
  // moves to topk, and the exchange left is what H is then sized for.
  ExchangePolicy p(0, false, std::nullopt);
  const double step_ms = 240;
  bool compression_changed = false;
  int max_h = 1;
  for (int r = 0; r < 40; ++r) {
    const int h = p.sync.steps();
    max_h = std::max(max_h, h);
    const double exchange = p.compression.current() == Compression::kTopK ? 30 : 400;
    const ExchangePolicy::Changes changed = p.Observe(h, h * step_ms + exchange, h * step_ms, -1);
    compression_changed = compression_changed || changed.compression;
  }
  EXPECT_TRUE(compression_changed);
  EXPECT_EQ(p.compression.current(), Compression::kTopK);
  // H waited for rounds at topk: it never went near what 400 ms needs.
  EXPECT_LT(max_h, 16);
  // 30 ms against 240 ms a step: 3 steps keep the exchange within 5%, and
  // H settles within the factor of 2 it tolerates; 400 ms would need 32.
  EXPECT_GE(p.sync.steps(), 3);
  EXPECT_LE(p.sync.steps(), 6);
}

}  // namespace
}  // namespace mt
