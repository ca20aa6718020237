// Real mthub and mtworker processes over 127.0.0.1 against attackers that
// know how the hub's watches work (issue 45): a bias that Leaves and Joins
// again before the persistence watch's 30 steps (the test build's
// tests/mtworker_faulty --rejoin-every) is dropped all the same, and no
// honest worker is; and a bias among workers whose data differ by design
// (--partition, where the watches used to be off) is dropped too.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/cluster_processes.h"
#include "tests/support/events.h"
#include "tests/support/files.h"
#include "tests/support/idx_writer.h"
#include "tests/support/subprocess.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using test_support::ChildProcess;
using ::testing::HasSubstr;

const char kFaultyWorker[] = "tests/mtworker_faulty";

using test_support::DropReasons;

TEST(WatchEvasionE2e, ABiasThatRejoinsEvery25GradientsIsDropped) {
  // Before: each Join was a new id, judged afresh, and 25 gradients never
  // reached the watch's 30: never dropped (issue 45, finding 7).
  const fs::path dir = test_support::FreshTempDir("watch-cycling-e2e");
  test_support::WriteIdxDataset(dir.string(), 4000, 400, 8);
  std::unique_ptr<ChildProcess> hub;
  // A small learning rate, as in HostileWorkerE2eBias: the synthetic
  // classes are easy, and the gradients (the bias with them) must not
  // vanish before the watch has seen enough.
  const int port = test_support::StartHub(
      hub, dir,
      {"--workers", "3", "--dataset", dir.string(), "--steps", "400", "--sync-every", "1", "--lr",
       "2e-4", "--batch-policy", "fixed", "--report", (dir / "hub.json").string()});
  ASSERT_GT(port, 0);
  auto w0 = test_support::StartWorker(dir, "w0", port);
  auto w1 = test_support::StartWorker(dir, "w1", port);
  auto bad = test_support::StartWorker(
      dir, "bad", port, {"--corrupt-gradients", "bias:2.5", "--rejoin-every", "25"}, kFaultyWorker);
  ASSERT_EQ(hub->Wait(120), 0) << hub->Log();
  EXPECT_EQ(w0->Wait(60), 0) << w0->Log();
  EXPECT_EQ(w1->Wait(60), 0) << w1->Log();
  bad->Wait(60);
  const fs::path events = test_support::EventsOf(dir, "hub");
  EXPECT_GE(test_support::CountEvents(events, "worker_left", {{"name", "bad"}}), 1)
      << "it did leave and join again";
  const auto why = DropReasons(events, "bad");
  ASSERT_EQ(why.size(), 1u) << hub->Log();
  EXPECT_THAT(why[0], HasSubstr("keep adding the same direction"));
  EXPECT_THAT(why[0], HasSubstr("earlier sessions from its address"));
  EXPECT_TRUE(DropReasons(events, "w0").empty());
  EXPECT_TRUE(DropReasons(events, "w1").empty());
  const auto report = test_support::ReadJson(dir / "hub.json");
  EXPECT_EQ(report["steps"], 400);
  EXPECT_EQ(report["stop_reason"], "training complete");
  fs::remove_all(dir);
}

TEST(WatchEvasionE2e, ABiasAmongWorkersWhoseDataDifferIsDropped) {
  // Before: --partition turned the watches off, and the bias stayed in
  // (issue 45, finding 8).
  // Fashion-MNIST: on the synthetic IDX classes each honest share is so
  // easy and so apart that honest residuals keep their direction as much
  // as the bias does (peaks 0.63-0.80 against 0.94).
  if (!fs::exists("/usr/share/datasets/fashion-mnist"))
    GTEST_SKIP() << "dataset-fashion-mnist is not installed (deploy/install-deps.sh installs it)";
  const fs::path dir = test_support::FreshTempDir("watch-partition-e2e");
  std::unique_ptr<ChildProcess> hub;
  const int port = test_support::StartHub(
      hub, dir,
      {"--workers", "3", "--model", "lenet5", "--dataset", "fashion-mnist", "--steps", "300",
       "--sync-every", "1", "--batch-policy", "fixed", "--seed", "1", "--partition",
       "dirichlet:0.5", "--report", (dir / "hub.json").string()});
  ASSERT_GT(port, 0);
  auto w0 = test_support::StartWorker(dir, "w0", port);
  auto w1 = test_support::StartWorker(dir, "w1", port);
  auto bad = test_support::StartWorker(dir, "bad", port, {"--corrupt-gradients", "bias:2.5"},
                                       kFaultyWorker);
  ASSERT_EQ(hub->Wait(120), 0) << hub->Log();
  EXPECT_EQ(w0->Wait(60), 0) << w0->Log();
  EXPECT_EQ(w1->Wait(60), 0) << w1->Log();
  bad->Wait(60);
  const fs::path events = test_support::EventsOf(dir, "hub");
  const auto why = DropReasons(events, "bad");
  ASSERT_EQ(why.size(), 1u) << hub->Log();
  EXPECT_THAT(why[0], HasSubstr("keep adding the same direction"));
  EXPECT_TRUE(DropReasons(events, "w0").empty());
  EXPECT_TRUE(DropReasons(events, "w1").empty());
  const auto report = test_support::ReadJson(dir / "hub.json");
  EXPECT_EQ(report["stop_reason"], "training complete");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mt
