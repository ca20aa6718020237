// worker/slowdown_pacer.h: --slowdown multiplies the compute a thread did,
// not the time it spent off the CPU (blocked, or waiting for a core).
#include "worker/slowdown_pacer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "core/util/process_stats.h"

namespace mt {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Burns this thread's CPU for about `seconds` of its own CPU time.
void Spin(double seconds) {
  const double until = ThreadCpuSeconds() + seconds;
  volatile double x = 1;
  while (ThreadCpuSeconds() < until) x = x * 1.0000001 + 1e-9;
}

TEST(SlowdownPacer, InactiveOnlyMovesTheMark) {
  SlowdownPacer pacer(1.0, true);
  EXPECT_FALSE(pacer.active());
  double since = pacer.Now();
  Spin(0.01);
  const auto t0 = Clock::now();
  pacer.Pay(&since);
  EXPECT_LT(SecondsSince(t0), 0.5);  // no sleep; bounded only against a stalled machine
  EXPECT_GE(since, ThreadCpuSeconds() - 0.5);
}

TEST(SlowdownPacer, SleepsFMinusOneTimesTheComputeOnTheCpuClock) {
  SlowdownPacer pacer(3.0, true);
  ASSERT_TRUE(pacer.active());
  double since = pacer.Now();
  const double cpu0 = ThreadCpuSeconds();
  Spin(0.02);
  const double computed = ThreadCpuSeconds() - cpu0;
  const auto t0 = Clock::now();
  pacer.Pay(&since);
  // A sleep lasts at least what was asked: two more times the compute.
  EXPECT_GE(SecondsSince(t0), 2 * computed * 0.99);
}

TEST(SlowdownPacer, TimeOffTheCpuIsNotMultiplied) {
  // 50 ms blocked (as a thread preempted by another process would be) with
  // F = 11: on the wall clock that is 500 ms more; on the thread's CPU
  // clock next to nothing.
  SlowdownPacer pacer(11.0, true);
  double since = pacer.Now();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto t0 = Clock::now();
  pacer.Pay(&since);
  EXPECT_LT(SecondsSince(t0), 0.25);
}

TEST(SlowdownPacer, WallClockWhenOtherThreadsOrAGpuCompute) {
  // Pool threads or a GPU do the work while this thread waits: only the
  // wall clock sees it.
  SlowdownPacer pacer(3.0, false);
  double since = pacer.Now();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const auto t0 = Clock::now();
  pacer.Pay(&since);
  EXPECT_GE(SecondsSince(t0), 0.04 * 0.99);
}

}  // namespace
}  // namespace mt
