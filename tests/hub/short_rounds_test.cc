// Short rounds for a device the batch split cannot slow down enough
// (hub/policy/short_rounds.h), computed by hand.
#include <gtest/gtest.h>

#include <vector>

#include "hub/policy/short_rounds.h"

namespace mt {
namespace {

ShortRoundInputs TwoFastOneSlow(double slow_ms_per_sample) {
  ShortRoundInputs in;
  in.batches = {64, 64, 8};  // the slow one at the floor
  in.caps = {192, 192, 192};
  in.ms_per_sample = {0.3, 0.32, slow_ms_per_sample};
  in.overhead_ms = {5, 5, 5};
  in.steps = 4;
  in.min_batch = 8;
  return in;
}

int Samples(const ShortRoundInputs& in, const std::vector<RoundShare>& out) {
  int n = 0;
  for (const RoundShare& s : out) n += s.batch * s.steps;
  return n;
}

TEST(ShortRounds, ADeviceAtTheFloorThatOutlastsTheOthersTakesFewerSteps) {
  // The others' round: 5 + 4 * 0.32 * 64 = 86.9 ms. The slow device (3 ms
  // a sample) at 8 samples: 5 + 4 * 24 = 101 ms a round; 3 steps take
  // 5 + 3 * 24 = 77 ms. 3 steps of 8 leave 32 - 24 = 8 samples, 2 a step,
  // to the fastest worker (0.3 ms).
  const ShortRoundInputs in = TwoFastOneSlow(3.0);
  const std::vector<RoundShare> out = ShortenSlowRounds(in);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].batch, 66);
  EXPECT_EQ(out[0].steps, 4);
  EXPECT_EQ(out[1].batch, 64);
  EXPECT_EQ(out[1].steps, 4);
  EXPECT_EQ(out[2].batch, 8);
  EXPECT_EQ(out[2].steps, 3);
  EXPECT_EQ(Samples(in, out), 4 * (64 + 64 + 8));  // the round trains the plan's samples
}

TEST(ShortRounds, OneStepAtWorstAndTheSamplesStayWholeSteps) {
  // 20 ms a sample: one step of 8 takes 165 ms, still over the others'
  // round; one step is the shortest round there is (attendance decides
  // whether the device stays).
  ShortRoundInputs in = TwoFastOneSlow(20.0);
  in.steps = 3;
  const std::vector<RoundShare> out = ShortenSlowRounds(in);
  // 1 step: 8 * 1 is no multiple of 3, 9 is: 9 samples, 3 a step of the
  // others' left to them: 24 - 9 = 15 samples, 5 a step to the fastest.
  EXPECT_EQ(out[2].batch, 9);
  EXPECT_EQ(out[2].steps, 1);
  EXPECT_EQ(out[0].batch, 69);
  EXPECT_EQ(Samples(in, out), 3 * (64 + 64 + 8));
}

TEST(ShortRounds, DevicesWithinTheSlackUnmeasuredOrAllAtTheFloorKeepTheirRound) {
  // 2.3 ms a sample: 5 + 4 * 18.4 = 78.6 ms, within the others' 86.9.
  const ShortRoundInputs near = TwoFastOneSlow(2.3);
  for (const RoundShare& s : ShortenSlowRounds(near)) EXPECT_EQ(s.steps, 4);
  ShortRoundInputs unmeasured = TwoFastOneSlow(3.0);
  unmeasured.ms_per_sample[1] = -1;
  for (const RoundShare& s : ShortenSlowRounds(unmeasured)) EXPECT_EQ(s.steps, 4);
  ShortRoundInputs floor = TwoFastOneSlow(3.0);
  floor.batches = {8, 8, 8};
  for (const RoundShare& s : ShortenSlowRounds(floor)) EXPECT_EQ(s.steps, 4);
  ShortRoundInputs per_step = TwoFastOneSlow(3.0);
  per_step.steps = 1;
  for (const RoundShare& s : ShortenSlowRounds(per_step)) EXPECT_EQ(s.steps, 1);
  // The fastest cannot take the samples left (its memory): nothing moves.
  ShortRoundInputs capped = TwoFastOneSlow(3.0);
  capped.caps[0] = 64;
  for (const RoundShare& s : ShortenSlowRounds(capped)) EXPECT_EQ(s.steps, 4);
}

}  // namespace
}  // namespace mt
