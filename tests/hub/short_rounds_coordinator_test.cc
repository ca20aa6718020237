// Short rounds in the coordinator (hub/policy/short_rounds.h through
// hub/coordinator/round_planner.h): fake workers as threads, one six times
// slower than the others, in rounds of four local steps.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "tests/hub/fake_workers.h"

namespace mt {
namespace {

using test_support::Fault;
using test_support::InProcessHub;
using test_support::RunResult;
using test_support::RunWith;

TEST(ShortRoundsCoordinator, ASlowDeviceTakesFewerStepsAndEveryRoundTrainsThePlansSamplesOnce) {
  constexpr int kSteps = 4, kRounds = 12, kTotal = 72;
  InProcessHub hub(3, kSteps * kRounds);
  hub.config.global_batch = kTotal;
  hub.config.local_sgd.sync_every = kSteps;
  hub.config.aggregate = Aggregation::kMean;
  hub.Rebuild();
  Fault fast, slow;
  // The fast ones balance at ~32 samples a step: ~64 ms a round. The slow
  // one at the floor of 8: 96 ms, too slow to keep the round's pace, not
  // so slow that it is set aside (hub/policy/attendance.h: rounds twice as
  // fast without it). Two steps of 8 take 48 ms.
  fast.ms_per_sample = 0.5;
  slow.ms_per_sample = 3;
  const RunResult r = RunWith(hub, {fast, fast, slow});
  EXPECT_EQ(r.steps, kSteps * kRounds);
  // Every round's assignments, by the step it starts at.
  std::map<int64_t, std::vector<proto::Assignment>> rounds;
  for (const auto& w : r.workers)
    for (const proto::Assignment& a : w->assignments) rounds[a.step()].push_back(a);
  ASSERT_EQ(rounds.size(), static_cast<size_t>(kRounds));
  int short_rounds = 0;
  for (const auto& [step, assigned] : rounds) {
    // The round's samples, each once: positions [step * 72, (step + 4) * 72).
    std::vector<int> seen(kSteps * kTotal, 0);
    for (const proto::Assignment& a : assigned) {
      ASSERT_GE(a.local_steps(), 1) << "step " << step;
      for (int k = 0; k < a.local_steps(); ++k)
        for (int j = 0; j < a.batch(); ++j) {
          const int64_t position = a.offset() + k * a.stride() + j - step * kTotal;
          ASSERT_GE(position, 0) << "step " << step;
          ASSERT_LT(position, kSteps * kTotal) << "step " << step;
          ++seen[static_cast<size_t>(position)];
        }
      if (a.local_steps() < kSteps) ++short_rounds;
    }
    for (size_t p = 0; p < seen.size(); ++p)
      ASSERT_EQ(seen[p], 1) << "step " << step << " sample " << p;
  }
  // Once measured, the slow device runs short rounds (the first rounds
  // measure everyone at full length).
  EXPECT_GE(short_rounds, kRounds / 2);
  const std::vector<int>& slow_steps = r.workers[2]->local_steps;
  ASSERT_FALSE(slow_steps.empty());
  EXPECT_LT(slow_steps.back(), kSteps);
  for (const auto& w : {r.workers[0].get(), r.workers[1].get()})
    for (int s : w->local_steps) EXPECT_EQ(s, kSteps);
  EXPECT_EQ(hub.metrics.samples, int64_t{kSteps} * kRounds * kTotal);
  for (float v : r.weights) ASSERT_TRUE(std::isfinite(v));
}

}  // namespace
}  // namespace mt
