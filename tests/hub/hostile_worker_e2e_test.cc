// Real mthub and mtworker processes, one worker of three sending corrupted
// gradients (the test build tests/mtworker_faulty --corrupt-gradients): the
// hub names and drops it and the run ends in success with a finite model.
// And where the hub cannot defend (two workers, --aggregate mean), the run
// fails instead of reporting success with a broken model.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <string>

#include "tests/support/cluster_processes.h"
#include "tests/support/events.h"
#include "tests/support/files.h"
#include "tests/support/idx_writer.h"
#include "tests/support/subprocess.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using test_support::ChildProcess;
using ::testing::AnyOf;
using ::testing::HasSubstr;

const char kFaultyWorker[] = "tests/mtworker_faulty";

class HostileWorkerE2e : public ::testing::TestWithParam<const char*> {};

TEST_P(HostileWorkerE2e, IsDroppedAndTheRunSucceedsWithAFiniteModel) {
  const fs::path dir = test_support::FreshTempDir("hostile-e2e");
  test_support::WriteIdxDataset(dir.string(), 2000, 200, 5);
  std::unique_ptr<ChildProcess> hub;
  const int port =
      test_support::StartHub(hub, dir,
                             {"--workers", "3", "--dataset", dir.string(), "--steps", "25",
                              "--sync-every", "1", "--report", (dir / "hub.json").string()});
  ASSERT_GT(port, 0);
  auto w0 = test_support::StartWorker(dir, "w0", port);
  auto w1 = test_support::StartWorker(dir, "w1", port);
  auto bad = test_support::StartWorker(dir, "bad", port, {"--corrupt-gradients", GetParam()},
                                       kFaultyWorker);
  ASSERT_EQ(hub->Wait(120), 0) << hub->Log();
  EXPECT_EQ(w0->Wait(60), 0) << w0->Log();
  EXPECT_EQ(w1->Wait(60), 0) << w1->Log();
  bad->Wait(60);
  const fs::path events = test_support::EventsOf(dir, "hub");
  EXPECT_EQ(test_support::CountEvents(events, "worker_dropped", {{"name", "bad"}}), 1);
  EXPECT_EQ(test_support::CountEvents(events, "worker_dropped", {{"name", "w0"}}), 0);
  EXPECT_EQ(test_support::CountEvents(events, "worker_dropped", {{"name", "w1"}}), 0);
  EXPECT_THAT(hub->Log(), HasSubstr("(bad) refused and dropped"));
  const auto report = test_support::ReadJson(dir / "hub.json");
  EXPECT_EQ(report["steps"], 25);
  EXPECT_EQ(report["stop_reason"], "training complete");
  EXPECT_EQ(report["refused_contributions"], 1);
  EXPECT_TRUE(std::isfinite(report["test_loss"].get<double>()));
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Corruptions, HostileWorkerE2e,
                         ::testing::Values("flt-max", "scale:1e4", "sign-flip"));

TEST(HostileWorkerE2eUndefended, ABrokenModelEndsTheRunInFailureNotSuccess) {
  // Two workers, a plain mean: nothing to tell the hostile one by, so its
  // x1e4 gradients reach the model. The run must not say it succeeded.
  // SGD: Adam's per-value normalisation shrugs off a scaled gradient, and
  // the model would survive.
  const fs::path dir = test_support::FreshTempDir("hostile-e2e-mean");
  test_support::WriteIdxDataset(dir.string(), 2000, 200, 6);
  std::unique_ptr<ChildProcess> hub;
  const int port = test_support::StartHub(
      hub, dir,
      {"--workers", "2", "--dataset", dir.string(), "--steps", "15", "--sync-every", "1",
       "--aggregate", "mean", "--optimizer", "sgd", "--report", (dir / "hub.json").string()});
  ASSERT_GT(port, 0);
  auto w0 = test_support::StartWorker(dir, "w0", port, {"--connect-timeout", "20"});
  auto bad = test_support::StartWorker(
      dir, "bad", port, {"--corrupt-gradients", "scale:1e4", "--connect-timeout", "20"},
      kFaultyWorker);
  EXPECT_EQ(hub->Wait(120), 1) << hub->Log();
  EXPECT_THAT(hub->Log(), AnyOf(HasSubstr("the model is broken"), HasSubstr("the model diverged")));
  w0->Wait(60);
  bad->Wait(60);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mt
