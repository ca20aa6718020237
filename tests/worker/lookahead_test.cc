// worker/lookahead.h: steps run on the lookahead's thread until Stop, which
// waits for the step in progress and says how many were taken.
#include "worker/lookahead.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

namespace mt {
namespace {

TEST(Lookahead, StopBeforeAnyStartIsZeroAndFree) {
  Lookahead ahead([](int) { FAIL() << "no step was wanted"; });
  EXPECT_FALSE(ahead.running());
  EXPECT_EQ(ahead.Stop(), 0);
}

TEST(Lookahead, TakesAtMostTheStepsAskedForThenIdles) {
  std::atomic<int> last{-1};
  Lookahead ahead([&](int k) { last = k; });
  ahead.Start(5);
  // Bounded: five trivial steps finish long before this.
  for (int i = 0; i < 5000 && ahead.running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_FALSE(ahead.running());
  EXPECT_EQ(ahead.Stop(), 5);
  EXPECT_EQ(last, 4);
  EXPECT_EQ(ahead.Stop(), 0);  // counted once
}

TEST(Lookahead, StopWaitsForTheStepInProgressAndCountsIt) {
  std::atomic<bool> in_step{false};
  std::atomic<int> finished{0};
  Lookahead ahead([&](int) {
    in_step = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    ++finished;
  });
  ahead.Start(1000);
  for (int i = 0; i < 5000 && !in_step; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(in_step);
  const int taken = ahead.Stop();
  EXPECT_GE(taken, 1);
  EXPECT_EQ(taken, finished.load());  // nothing half done, nothing after Stop
  EXPECT_FALSE(ahead.running());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(finished.load(), taken);
}

TEST(Lookahead, RestartsAndPassesOnWhatAStepThrew) {
  int calls = 0;
  Lookahead ahead([&](int k) {
    ++calls;
    if (k == 2) throw std::runtime_error("step 2 failed");
  });
  ahead.Start(10);
  for (int i = 0; i < 5000 && ahead.running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_THROW(ahead.Stop(), std::runtime_error);
  EXPECT_EQ(calls, 3);
  ahead.Start(2);  // usable again
  for (int i = 0; i < 5000 && ahead.running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(ahead.Stop(), 2);
}

TEST(Lookahead, DestroyedWhileRunningStopsCleanly) {
  std::atomic<int> steps{0};
  {
    Lookahead ahead([&](int) {
      ++steps;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
    ahead.Start(1 << 30);
    for (int i = 0; i < 5000 && steps == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const int after = steps;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(steps.load(), after);
}

}  // namespace
}  // namespace mt
