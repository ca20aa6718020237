// Setting aside a device that costs the group more than it adds, and
// bringing it back (hub/policy/attendance.h), over the batch controller's
// real estimates: rounds are counted, not waited for.
#include <gtest/gtest.h>

#include <map>
#include <utility>
#include <vector>

#include "hub/policy/attendance.h"
#include "hub/policy/batch_controller.h"

namespace mt {
namespace {

using Member = BatchController::Member;

constexpr int kTotal = 72;    // the global batch
constexpr int kMinBatch = 8;  // local steps' floor (BatchController::kMinLocalBatch)

struct Group {
  BatchController controller{BatchPolicy::kBalanced};
  Attendance attendance;
  std::vector<Member> present;
  int min_members = 1;
  std::map<int, std::pair<double, double>> speed;  // as last measured

  // A worker that computes a sample in `ms_per_sample` and pays
  // `overhead_ms` per exchange (measured once at batch 8).
  void Add(int id, double ms_per_sample, double overhead_ms) {
    present.push_back({id, 1000, 1.0});
    Measure(id, ms_per_sample, overhead_ms);
  }
  void Measure(int id, double ms_per_sample, double overhead_ms) {
    speed[id] = {ms_per_sample, overhead_ms};
    controller.Forget(id);
    controller.Observe(id, 8, 8 * ms_per_sample, 8 * ms_per_sample + overhead_ms);
  }
  // One round: the ids taking part.
  std::vector<int> Round(Attendance::Changes* changes = nullptr) {
    Attendance::Changes local;
    const auto taking = attendance.Choose(
        present, min_members,
        [&](const std::vector<Member>& m) {
          return controller.PredictStepMs(kTotal, m, 1, kMinBatch);
        },
        changes ? changes : &local);
    // Tried again: measured anew, here at once and as before.
    for (int id : (changes ? changes : &local)->remeasure)
      Measure(id, speed.at(id).first, speed.at(id).second);
    std::vector<int> ids;
    for (const Member& m : taking) ids.push_back(m.worker);
    return ids;
  }
};

TEST(SetAside, AHopelessDeviceIsSetAsideAfterTheSettleRounds) {
  Group g;
  g.Add(0, 0.3, 2);   // a phone
  g.Add(1, 11.7, 2);  // 40x slower: its 8 samples take 94 ms, the phone's 72 take 24
  for (int r = 1; r < Attendance::kSettleRounds; ++r)
    EXPECT_EQ(g.Round(), (std::vector<int>{0, 1})) << "round " << r;
  Attendance::Changes changes;
  EXPECT_EQ(g.Round(&changes), (std::vector<int>{0}));
  EXPECT_EQ(changes.set_aside, (std::vector<int>{1}));
  EXPECT_TRUE(g.attendance.set_aside(1));
  for (int r = 0; r < 10; ++r) EXPECT_EQ(g.Round(), (std::vector<int>{0}));
}

TEST(SetAside, DevicesThatHelpAreKept) {
  Group g;
  g.Add(0, 0.3, 2);
  g.Add(1, 0.3, 2);
  g.Add(2, 1.5, 2);  // 5x slower, but its share still shortens the round
  for (int r = 0; r < 100; ++r) ASSERT_EQ(g.Round(), (std::vector<int>{0, 1, 2})) << r;
}

TEST(SetAside, NeverBelowTheMinimumOfWorkers) {
  Group g;
  g.min_members = 2;
  g.Add(0, 0.3, 2);
  g.Add(1, 11.7, 2);
  for (int r = 0; r < 20; ++r) ASSERT_EQ(g.Round(), (std::vector<int>{0, 1})) << r;
}

// The fast worker's memory holds 20 samples of the 72: without the slow
// one the step could not be taken at all, however slow that one is.
TEST(SetAside, NobodyIsSetAsideWhomTheOthersCannotReplace) {
  Group g;
  g.Add(0, 0.3, 2);
  g.present[0].cap = 20;
  g.Add(1, 11.7, 2);
  for (int r = 0; r < 20; ++r) ASSERT_EQ(g.Round(), (std::vector<int>{0, 1})) << r;
}

TEST(SetAside, UnmeasuredWorkersAreNotJudged) {
  Group g;
  g.Add(0, 0.3, 2);
  g.present.push_back({1, 1000, 1.0});  // joined, not measured yet
  for (int r = 0; r < 10; ++r) ASSERT_EQ(g.Round(), (std::vector<int>{0, 1})) << r;
}

TEST(SetAside, BroughtBackWhenItWouldPayAgain) {
  Group g;
  g.Add(0, 0.3, 2);
  g.Add(1, 11.7, 2);
  for (int r = 0; r < Attendance::kSettleRounds; ++r) g.Round();
  ASSERT_TRUE(g.attendance.set_aside(1));
  // The fast phone slows down (another app): the slow one's 8 samples now
  // save it time.
  g.Measure(0, 20.0, 2);
  Attendance::Changes changes;
  EXPECT_EQ(g.Round(&changes), (std::vector<int>{0, 1}));
  EXPECT_EQ(changes.brought_back, (std::vector<int>{1}));
}

TEST(SetAside, TriedAgainLaterAndLongerAsideEachTimeItIsStillHopeless) {
  Group g;
  g.Add(0, 0.3, 2);
  g.Add(1, 11.7, 2);
  int64_t aside_at = 0;
  std::vector<int64_t> waits;
  for (int r = 0; r < 400; ++r) {
    Attendance::Changes changes;
    g.Round(&changes);
    if (!changes.set_aside.empty()) aside_at = g.attendance.rounds();
    if (!changes.brought_back.empty()) waits.push_back(g.attendance.rounds() - aside_at);
  }
  // Tried after 32 rounds aside, then 64, then 128: each trial costs two
  // rounds with it, each wait twice the last.
  ASSERT_GE(waits.size(), 3u);
  EXPECT_EQ(waits[0], Attendance::kRecheckRounds);
  EXPECT_EQ(waits[1], 2 * Attendance::kRecheckRounds);
  EXPECT_EQ(waits[2], 4 * Attendance::kRecheckRounds);
}

}  // namespace
}  // namespace mt
