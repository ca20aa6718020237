// Real mthub and mtworker processes, one worker of three sending corrupted
// gradients (the test build tests/mtworker_faulty --corrupt-gradients): the
// hub names and drops it and the run ends in success with a finite model.
// And where the hub cannot defend (two workers, --aggregate mean), the run
// fails instead of reporting success with a broken model or one at chance.
// Issue 32: one attacker's three sessions with a NaN each in the same step
// are dropped and the run goes on; a worker adding a constant vector of its
// gradient's norm is dropped before it walks the model to chance.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
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
using ::testing::AnyOf;
using ::testing::HasSubstr;

using test_support::DropReasons;

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

TEST(HostileWorkerE2eNan, ThreeSessionsWithANanEachAreDroppedAndTheRunGoesOn) {
  // Issue 32: beside four honest workers the hub stopped "model diverged".
  const fs::path dir = test_support::FreshTempDir("hostile-e2e-nan");
  test_support::WriteIdxDataset(dir.string(), 2000, 200, 7);
  std::unique_ptr<ChildProcess> hub;
  const int port = test_support::StartHub(hub, dir,
                                          {"--workers", "7", "--dataset", dir.string(), "--steps",
                                           "10", "--sync-every", "1", "--batch-policy", "fixed",
                                           "--report", (dir / "hub.json").string()});
  ASSERT_GT(port, 0);
  std::vector<std::unique_ptr<ChildProcess>> honest, bad;
  for (int i = 0; i < 4; ++i)
    honest.push_back(test_support::StartWorker(dir, "w" + std::to_string(i), port));
  for (int i = 0; i < 3; ++i)
    bad.push_back(test_support::StartWorker(dir, "bad" + std::to_string(i), port,
                                            {"--corrupt-gradients", "nan-at:4"}, kFaultyWorker));
  ASSERT_EQ(hub->Wait(120), 0) << hub->Log();
  for (auto& w : honest) EXPECT_EQ(w->Wait(60), 0) << w->Log();
  for (auto& w : bad) w->Wait(60);
  const fs::path events = test_support::EventsOf(dir, "hub");
  for (int i = 0; i < 3; ++i) {
    const auto why = DropReasons(events, "bad" + std::to_string(i));
    ASSERT_EQ(why.size(), 1u) << i;
    EXPECT_THAT(why[0], HasSubstr("non-finite")) << i;
  }
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(DropReasons(events, "w" + std::to_string(i)).empty());
  const auto report = test_support::ReadJson(dir / "hub.json");
  EXPECT_EQ(report["steps"], 10);
  EXPECT_EQ(report["stop_reason"], "training complete");
  fs::remove_all(dir);
}

TEST(HostileWorkerE2eBias, AConstantBiasOfTheGradientsNormIsDropped) {
  // Issue 32: inside the clip radius, near zero cosine with the others, it
  // walked the model to chance and the run ended "training complete".
  const fs::path dir = test_support::FreshTempDir("hostile-e2e-bias");
  test_support::WriteIdxDataset(dir.string(), 4000, 400, 8);
  std::unique_ptr<ChildProcess> hub;
  // A small learning rate: the synthetic classes are so easy that at the
  // default one the gradients all but vanish within 30 steps, the bias
  // with them, and what is left of the hostile one is refused by its norm.
  const int port = test_support::StartHub(
      hub, dir,
      {"--workers", "3", "--dataset", dir.string(), "--steps", "80", "--sync-every", "1", "--lr",
       "2e-4", "--batch-policy", "fixed", "--report", (dir / "hub.json").string()});
  ASSERT_GT(port, 0);
  auto w0 = test_support::StartWorker(dir, "w0", port);
  auto w1 = test_support::StartWorker(dir, "w1", port);
  auto bad =
      test_support::StartWorker(dir, "bad", port, {"--corrupt-gradients", "bias:1"}, kFaultyWorker);
  ASSERT_EQ(hub->Wait(120), 0) << hub->Log();
  EXPECT_EQ(w0->Wait(60), 0) << w0->Log();
  EXPECT_EQ(w1->Wait(60), 0) << w1->Log();
  bad->Wait(60);
  const fs::path events = test_support::EventsOf(dir, "hub");
  const auto why = DropReasons(events, "bad");
  ASSERT_EQ(why.size(), 1u);
  EXPECT_THAT(why[0], HasSubstr("keep adding the same direction"));
  EXPECT_TRUE(DropReasons(events, "w0").empty());
  EXPECT_TRUE(DropReasons(events, "w1").empty());
  const auto report = test_support::ReadJson(dir / "hub.json");
  EXPECT_EQ(report["steps"], 80);
  EXPECT_EQ(report["stop_reason"], "training complete");
  EXPECT_GT(report["test_accuracy"].get<double>(), 0.5);
  fs::remove_all(dir);
}

TEST(ModelAtChanceE2e, EndsTheRunInFailureNotSuccess) {
  // A model that learned nothing (here: a learning rate that moves no
  // weight; in issue 32 a constant bias that walked it back to a uniform
  // guess) has finite weights and a loss of ln(classes), and is no result.
  const fs::path dir = test_support::FreshTempDir("chance-e2e");
  test_support::WriteIdxDataset(dir.string(), 2000, 400, 9);
  std::unique_ptr<ChildProcess> hub;
  const int port = test_support::StartHub(hub, dir,
                                          {"--workers", "2", "--dataset", dir.string(), "--steps",
                                           "10", "--lr", "1e-9", "--optimizer", "sgd", "--report",
                                           (dir / "hub.json").string()});
  ASSERT_GT(port, 0);
  auto w0 = test_support::StartWorker(dir, "w0", port, {"--connect-timeout", "20"});
  auto w1 = test_support::StartWorker(dir, "w1", port, {"--connect-timeout", "20"});
  EXPECT_EQ(hub->Wait(120), 1) << hub->Log();
  const auto report = test_support::ReadJson(dir / "hub.json");
  EXPECT_THAT(report["stop_reason"].get<std::string>(), HasSubstr("the model is at chance"));
  EXPECT_LT(report["test_accuracy"].get<double>(), 0.15);
  w0->Wait(60);
  w1->Wait(60);
  fs::remove_all(dir);
}

TEST(HostileWorkerE2eLate, AWorkerThatHoldsEveryGradientIsSetAsideLikeASlowDevice) {
  // Issue 45: a worker that computes at full speed but holds each gradient
  // 300 ms made the run 10x slower and was never left out. From the hub's
  // view a delay in sending is a slow device: its round trip bounds the
  // compute time it reports, and the balanced round without it is far
  // shorter (hub/policy/attendance.h).
  const fs::path dir = test_support::FreshTempDir("hostile-e2e-late");
  test_support::WriteIdxDataset(dir.string(), 2000, 200, 8);
  std::unique_ptr<ChildProcess> hub;
  const int port =
      test_support::StartHub(hub, dir,
                             {"--workers", "3", "--dataset", dir.string(), "--steps", "40",
                              "--sync-every", "1", "--report", (dir / "hub.json").string()});
  ASSERT_GT(port, 0);
  auto w0 = test_support::StartWorker(dir, "w0", port, {"--threads", "1"});
  auto w1 = test_support::StartWorker(dir, "w1", port, {"--threads", "1"});
  auto late = test_support::StartWorker(
      dir, "late", port, {"--threads", "1", "--hold-gradients-ms", "300"}, kFaultyWorker);
  ASSERT_EQ(hub->Wait(180), 0) << hub->Log();
  EXPECT_EQ(w0->Wait(60), 0) << w0->Log();
  EXPECT_EQ(w1->Wait(60), 0) << w1->Log();
  late->Wait(60);
  const fs::path events = test_support::EventsOf(dir, "hub");
  EXPECT_GE(test_support::CountEvents(events, "worker_set_aside", {{"name", "late"}}), 1)
      << hub->Log();
  EXPECT_EQ(test_support::CountEvents(events, "worker_set_aside", {{"name", "w0"}}), 0);
  EXPECT_EQ(test_support::CountEvents(events, "worker_set_aside", {{"name", "w1"}}), 0);
  const auto report = test_support::ReadJson(dir / "hub.json");
  EXPECT_EQ(report["steps"], 40);
  EXPECT_EQ(report["stop_reason"], "training complete");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mt
