// The clock offset estimate (core/trace/clock_offset.h): round trips with
// known delays on a worker clock a known distance from the hub's. The
// estimate comes from the quickest round trip and is off by half its legs'
// asymmetry, no more.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>

#include "core/trace/clock_offset.h"

namespace mt::trace {
namespace {

// A plan leaving the hub at `hub_send`, taking `out` to arrive, the worker
// computing for `compute`, the gradient taking `back` to return, with the
// worker's clock `offset` ahead of the hub's.
ClockSample RoundTrip(int64_t hub_send, int64_t out, int64_t compute, int64_t back,
                      int64_t offset) {
  ClockSample s;
  s.hub_send_us = hub_send;
  s.worker_receive_us = hub_send + out + offset;
  s.worker_send_us = s.worker_receive_us + compute;
  s.hub_receive_us = hub_send + out + compute + back;
  return s;
}

TEST(ClockOffset, SymmetricDelaysGiveTheOffsetExactlyWhateverTheCompute) {
  ClockOffset clock;
  EXPECT_FALSE(clock.known());
  EXPECT_TRUE(clock.Add(RoundTrip(1'000'000, 300, 25'000, 300, -7'654'321)));
  EXPECT_TRUE(clock.known());
  EXPECT_EQ(clock.offset_us(), -7'654'321);
  EXPECT_EQ(clock.round_trip_us(), 600);
}

TEST(ClockOffset, TheQuickestRoundTripBoundsTheErrorByItsAsymmetry) {
  const int64_t offset = 123'456'789;
  std::mt19937_64 rng(5);
  // Each leg: a floor (the outbound one's shorter: the asymmetry a run
  // cannot see) and queueing on top; compute varies a lot more.
  std::exponential_distribution<double> queueing(1.0 / 2000);
  std::uniform_int_distribution<int64_t> compute(5'000, 50'000);
  const int64_t out_floor = 150, back_floor = 350;
  ClockOffset clock;
  int64_t t = 10'000'000, best_rtt = -1, best_error = 0;
  for (int i = 0; i < 500; ++i) {
    const auto out = out_floor + static_cast<int64_t>(queueing(rng));
    const auto back = back_floor + static_cast<int64_t>(queueing(rng));
    const ClockSample s = RoundTrip(t, out, compute(rng), back, offset);
    ASSERT_TRUE(clock.Add(s));
    if (best_rtt < 0 || out + back < best_rtt) {
      best_rtt = out + back;
      best_error = (out - back) / 2;
    }
    t += 60'000;
  }
  EXPECT_EQ(clock.samples(), 500);
  EXPECT_EQ(clock.round_trip_us(), best_rtt);
  // Off by half the chosen sample's asymmetry (integer halving aside)...
  EXPECT_LE(std::llabs(clock.offset_us() - offset - best_error), 1);
  // ...which, with this many samples, is close to the floors' own.
  EXPECT_LE(std::llabs(clock.offset_us() - offset), (back_floor - out_floor) / 2 + 200);
  EXPECT_LE(std::llabs(clock.offset_us() - offset), clock.round_trip_us() / 2);
}

TEST(ClockOffset, SamplesThatCannotBeRightAreIgnored) {
  ClockOffset clock;
  ClockSample unstamped = RoundTrip(1000, 10, 100, 10, 0);
  unstamped.hub_send_us = 0;  // a plan sent by a hub that was not tracing
  EXPECT_FALSE(clock.Add(unstamped));
  ClockSample backwards = RoundTrip(1000, 10, 100, 10, 0);
  backwards.worker_send_us = backwards.worker_receive_us - 1;
  EXPECT_FALSE(clock.Add(backwards));
  ClockSample negative = RoundTrip(1000, 10, 100, 10, 0);
  negative.worker_send_us += 1000;  // claims more compute than the round trip held
  EXPECT_FALSE(clock.Add(negative));
  EXPECT_FALSE(clock.known());
  EXPECT_EQ(clock.offset_us(), 0);
}

}  // namespace
}  // namespace mt::trace
