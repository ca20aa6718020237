// Time to accuracy on the hub: --eval-every evaluates between epoch ends
// into the report's eval_history, and --target-accuracy stops the run the
// first time an evaluation reaches it (evaluated on a copy of the weights
// while the steps go on). Hub and a worker run as threads in
// this process over loopback, on a small learnable IDX dataset.
#include <gtest/gtest.h>

#include <filesystem>
#include <vector>

#include "tests/support/history_check.h"
#include "tests/support/idx_writer.h"
#include "tests/support/in_process_cluster.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class TimeToAccuracy : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test_support::FreshTempDir("tta");
    test_support::WriteIdxDataset(dir_.string(), 3000, 500, 5);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
};

TEST_F(TimeToAccuracy, EvalEveryRecordsEachEvaluationWithItsTimeAndSamples) {
  HubConfig hc;
  hc.local_sgd.sync_every = 1;  // evaluations between single steps, whatever the machine's load
  hc.max_steps = 35;            // 64 per step: 2240 of 3000 samples, inside the first epoch
  hc.eval_every = 10;
  const json r = test_support::TrainInProcess(hc, dir_, 1);
  ASSERT_EQ(r["steps"], 35);
  // Every 10 steps and the final weights.
  test_support::ExpectEvaluatedAt(r, {10, 20, 30, 35}, 64);
  // The last evaluation closes the epoch it ended in.
  ASSERT_EQ(r["epochs"].size(), 1u);
  EXPECT_EQ(r["epochs"][0]["complete"], false);
  EXPECT_EQ(r["seconds_to_target"], -1);
  EXPECT_EQ(r["stopped_early"], false);
}

TEST_F(TimeToAccuracy, ATargetStopsTheRunAtTheFirstEvaluationThatReachesIt) {
  HubConfig hc;
  hc.local_sgd.sync_every = 1;  // per-step: under a sanitizer auto would take local steps
  hc.epochs = 10;
  hc.eval_every = 5;
  hc.target_accuracy = 0.5;  // far above chance (0.1), reached within the first epoch
  const json r = test_support::TrainInProcess(hc, dir_, 1);
  EXPECT_EQ(r["stopped_early"], true);
  EXPECT_EQ(r["stop_reason"], "target accuracy reached");
  EXPECT_EQ(r["target_accuracy"], 0.5);
  const int64_t at = r["step_to_target"];
  ASSERT_GT(at, 0);
  EXPECT_EQ(at % 5, 0);
  // The hub evaluates a copy of the weights while the steps go on; the run
  // stops once the result is in, by the next evaluation at the latest.
  EXPECT_GE(r["steps"], at + 1);
  EXPECT_LE(r["steps"], at + 5 + 1);
  const json& history = r["eval_history"];
  ASSERT_GE(history.size(), 2u) << "the target was not missed first: " << history.dump();
  bool seen = false;
  for (const json& e : history) {
    if (e["step"] < at) {
      EXPECT_LT(e["test_accuracy"], 0.5) << "reached earlier, at " << e["step"];
    }
    if (e["step"] == at) {
      seen = true;
      EXPECT_GE(e["test_accuracy"], 0.5);
      EXPECT_EQ(e["seconds"], r["seconds_to_target"]);
    }
  }
  EXPECT_TRUE(seen) << history.dump();
}

}  // namespace
}  // namespace mt
