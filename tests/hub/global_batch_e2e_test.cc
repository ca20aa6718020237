// The global batch follows the devices (mthub without --global-batch): real
// processes over 127.0.0.1, workers that time themselves before Hello, one
// of them made slower with --slowdown. The hub trains what the group can
// compute in the time its fastest device takes for 64 samples, at the
// learning rate of that batch, and a resumed run keeps the batch its
// checkpoint was counted in.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "tests/support/cluster_processes.h"
#include "tests/support/events.h"
#include "tests/support/files.h"
#include "tests/support/idx_writer.h"
#include "tests/support/subprocess.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test_support::ChildProcess;
using test_support::CountEvents;
using test_support::EventsOf;
using test_support::ReadJson;
using test_support::ReportedWorker;
using test_support::StartHub;
using test_support::StartWorker;

constexpr int kTrain = 2000;

class GlobalBatch : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test_support::FreshTempDir("global-batch");
    test_support::WriteIdxDataset(dir_.string(), kTrain, 100, 7);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A hub for two workers, `fast` at full speed and `slow` at --slowdown
  // `slowdown`, for `steps` steps; its report, once all three exited 0.
  json Run(double slowdown, int steps, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--workers",      "2",
                                     "--dataset",      dir_.string(),
                                     "--steps",        std::to_string(steps),
                                     "--sync-every",   "4",
                                     "--digest-every", "1",
                                     "--report",       (dir_ / "hub.json").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    std::unique_ptr<ChildProcess> hub;
    const int port = StartHub(hub, dir_, args);
    if (port == 0) return json::object();
    auto fast = StartWorker(dir_, "fast", port, {"--threads", "1"});
    auto slow =
        StartWorker(dir_, "slow", port, {"--threads", "1", "--slowdown", std::to_string(slowdown)});
    EXPECT_EQ(fast->Wait(300), 0) << fast->Log();
    EXPECT_EQ(slow->Wait(300), 0) << slow->Log();
    EXPECT_EQ(hub->Wait(60), 0) << hub->Log();
    return ReadJson(dir_ / "hub.json");
  }

  fs::path dir_;
};

TEST_F(GlobalBatch, FollowsASlowDeviceWithTheLearningRateOfTheBatch) {
  const json r = Run(5, 24);
  const int batch = r.value("global_batch", 0);
  // 64 for the fast worker and about 64 / 5 for the other; timing on a
  // busy machine moves the share, not the rule.
  EXPECT_GE(batch, 64 + 6) << r.dump(2);
  EXPECT_LE(batch, 64 + 26) << r.dump(2);
  EXPECT_EQ(r.value("global_batch_default", 0), 128) << r.dump(2);
  EXPECT_EQ(CountEvents(EventsOf(dir_, "hub"), "global_batch_changed",
                        {{"detail", "128->" + std::to_string(batch)}}),
            1);
  EXPECT_EQ(r.value("samples", int64_t{0}), int64_t{24} * batch) << r.dump(2);
  // Adam's default rate for that batch, on the hub and on both workers,
  // which take it from the state of their first step.
  const double lr = 0.004 * std::sqrt(batch / 64.0);
  EXPECT_NEAR(r.value("lr", 0.0), lr, 1e-6) << r.dump(2);
  for (const char* name : {"fast", "slow"}) {
    const json w = ReadJson(dir_ / (std::string(name) + ".json"));
    EXPECT_NEAR(w.value("lr", 0.0), lr, 1e-6) << w.dump(2);
    EXPECT_EQ(ReportedWorker(r, name).value("resyncs", -1), 0) << r.dump(2);
  }
}

TEST_F(GlobalBatch, EqualDevicesAndAGivenBatchKeepTheirs) {
  json r = Run(1, 8);
  EXPECT_EQ(r.value("global_batch", 0), 128) << r.dump(2);
  EXPECT_FALSE(r.contains("global_batch_default")) << r.dump(2);
  EXPECT_EQ(CountEvents(EventsOf(dir_, "hub"), "global_batch_changed"), 0);
  r = Run(5, 8, {"--global-batch", "128"});
  EXPECT_EQ(r.value("global_batch", 0), 128) << r.dump(2);
  EXPECT_NEAR(r.value("lr", 0.0), 0.004 * std::sqrt(2.0), 1e-6) << r.dump(2);
}

TEST_F(GlobalBatch, AResumedRunKeepsTheBatchItsCheckpointCounted) {
  const std::string ck = (dir_ / "ck").string();
  const json first = Run(5, 12, {"--checkpoint-dir", ck, "--checkpoint-every", "12"});
  const int batch = first.value("global_batch", 0);
  ASSERT_LT(batch, 128) << first.dump(2);
  // Equal devices now: left to itself the hub would keep 128.
  const json resumed = Run(1, 20, {"--resume", ck});
  EXPECT_EQ(resumed.value("resumed_from_step", -1), 12) << resumed.dump(2);
  EXPECT_EQ(resumed.value("global_batch", 0), batch) << resumed.dump(2);
  EXPECT_EQ(resumed.value("samples", int64_t{0}), int64_t{8} * batch) << resumed.dump(2);
  // A batch named on the command line that differs is refused, not mixed in.
  ChildProcess refused({test_support::BinaryPath("hub/mthub"), "--port", "0", "--http-port", "0",
                        "--workers", "2", "--dataset", dir_.string(), "--steps", "30",
                        "--global-batch", "128", "--resume", ck},
                       (dir_ / "refused.log").string());
  EXPECT_EQ(refused.Wait(60), 1) << refused.Log();
  EXPECT_NE(refused.Log().find("--global-batch " + std::to_string(batch)), std::string::npos)
      << refused.Log();
}

}  // namespace
}  // namespace mt
