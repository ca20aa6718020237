// Faults a phone cluster meets, on real processes over 127.0.0.1: a worker
// killed outright, a worker frozen (SIGSTOP, as a phone's OS does to a
// background app), and the hub itself killed and restarted with --resume.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <regex>
#include <thread>

#include "core/checkpoint/checkpoint.h"
#include "tests/support/cluster_processes.h"
#include "tests/support/files.h"
#include "tests/support/idx_writer.h"
#include "tests/support/subprocess.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using test_support::ChildProcess;
using test_support::StartHub;
using test_support::StartWorker;
using test_support::WaitForLog;

constexpr const char* kFashion = "/usr/share/datasets/fashion-mnist";

// The last "step N/M" progress line of a hub log; 0 before the first.
int64_t LastStep(const std::string& log) {
  static const std::regex progress(R"(step (\d+)/\d+ epoch)");
  int64_t last = 0;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), progress); it != std::sregex_iterator(); ++it)
    last = std::stoll((*it)[1]);
  return last;
}

bool WaitForStep(const ChildProcess& hub, int64_t step, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    if (LastStep(hub.Log()) >= step) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

TEST(Faults, KillNineOfOneWorkerMidEpochThenItComesBack) {
  if (!fs::exists(kFashion)) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const fs::path dir = test_support::FreshTempDir("fault-kill-worker");
  std::unique_ptr<ChildProcess> hub;
  const int port = StartHub(hub, dir, {"--workers", "3", "--epochs", "1", "--log-every", "0.1", "--report",
                                       (dir / "hub.json").string()});
  ASSERT_GT(port, 0);
  // Slowed down so the epoch lasts long enough to kill and restart in it.
  const std::vector<std::string> slow = {"--slowdown", "2"};
  auto w0 = StartWorker(dir, "w0", port, slow), w1 = StartWorker(dir, "w1", port, slow);
  auto w2 = StartWorker(dir, "w2", port, slow);
  ASSERT_TRUE(WaitForStep(*hub, 40, 120)) << hub->Log();
  w2->Signal(SIGKILL);
  EXPECT_EQ(w2->Wait(10), 128 + SIGKILL);
  ASSERT_TRUE(WaitForLog(*hub, "(w2) left", 30)) << hub->Log();
  const int64_t killed_at = LastStep(hub->Log());
  auto back = StartWorker(dir, "w2back", port, slow);
  EXPECT_EQ(w0->Wait(600), 0) << w0->Log();
  EXPECT_EQ(w1->Wait(600), 0) << w1->Log();
  EXPECT_EQ(back->Wait(600), 0) << back->Log();
  ASSERT_EQ(hub->Wait(60), 0) << hub->Log();
  const std::string report = test_support::ReadAll(dir / "hub.json");
  EXPECT_EQ(test_support::JsonNumber(report, "steps"), 313) << report;
  EXPECT_GE(test_support::JsonNumber(report, "test_accuracy"), 0.84) << report;
  // The step w2 died in went on with the others' samples only.
  EXPECT_GE(test_support::JsonNumber(report, "samples"), 60000 - 192) << report;
  ASSERT_LT(killed_at, 300) << "the epoch was nearly over before the restart; the test proves little";
  EXPECT_GT(test_support::JsonNumber(test_support::ReadAll(dir / "w2back.json"), "steps"), 0) << back->Log();
  fs::remove_all(dir);
}

TEST(Faults, AFrozenWorkerIsLeftOutAfterTheDeadlineAndResyncsWhenItThaws) {
  const fs::path dir = test_support::FreshTempDir("fault-sigstop");
  test_support::WriteIdxDataset(dir.string(), 2000, 100, 9);
  std::unique_ptr<ChildProcess> hub;
  const int port = StartHub(hub, dir,
                            {"--workers", "2", "--dataset", dir.string(), "--epochs", "1000", "--steps", "1500",
                             "--global-batch", "64", "--deadline-floor", "1", "--log-every", "0.1", "--report",
                             (dir / "hub.json").string()});
  ASSERT_GT(port, 0);
  auto a = StartWorker(dir, "a", port, {"--slowdown", "2"});
  auto b = StartWorker(dir, "b", port, {"--slowdown", "2"});
  ASSERT_TRUE(WaitForStep(*hub, 30, 120)) << hub->Log();
  b->Signal(SIGSTOP);
  ASSERT_TRUE(WaitForLog(*hub, "(b) missed the deadline", 30)) << hub->Log();
  // The hub goes on with a alone.
  const int64_t left_out_at = LastStep(hub->Log());
  EXPECT_TRUE(WaitForStep(*hub, left_out_at + 20, 60)) << hub->Log();
  b->Signal(SIGCONT);
  EXPECT_TRUE(WaitForLog(*hub, "(b) is back", 30)) << hub->Log();
  EXPECT_TRUE(WaitForLog(*b, "received the model", 30, 2)) << b->Log();
  EXPECT_EQ(a->Wait(300), 0) << a->Log();
  EXPECT_EQ(b->Wait(300), 0) << b->Log();
  ASSERT_EQ(hub->Wait(60), 0) << hub->Log();
  const std::string hub_report = test_support::ReadAll(dir / "hub.json");
  EXPECT_EQ(test_support::JsonNumber(hub_report, "steps"), 1500) << hub_report;
  const std::string b_report = test_support::ReadAll(dir / "b.json");
  EXPECT_GE(test_support::JsonNumber(b_report, "steps_left_out"), 1) << b_report;
  EXPECT_GE(test_support::JsonNumber(b_report, "resyncs"), 1) << b_report;
  // It trained again after the resync: steps beyond those before the freeze.
  EXPECT_GT(test_support::JsonNumber(b_report, "steps"), left_out_at + 1) << b_report;
  fs::remove_all(dir);
}

TEST(Faults, HubKilledAndResumedFromItsCheckpointFinishesTheRun) {
  if (!fs::exists(kFashion)) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const fs::path dir = test_support::FreshTempDir("fault-hub-resume");
  const fs::path ck = dir / "ck";
  const std::vector<std::string> run = {"--workers", "3", "--epochs", "1", "--checkpoint-every", "40", "--log-every",
                                        "0.1", "--report", (dir / "hub.json").string()};
  std::unique_ptr<ChildProcess> hub;
  std::vector<std::string> first = run;
  first.insert(first.end(), {"--checkpoint-dir", ck.string()});
  const int port = StartHub(hub, dir, first);
  ASSERT_GT(port, 0);
  std::vector<std::unique_ptr<ChildProcess>> workers;
  for (int i = 0; i < 3; ++i)
    workers.push_back(StartWorker(dir, "w" + std::to_string(i), port, {"--slowdown", "2", "--connect-timeout", "120"}));
  // Kill it once it has a checkpoint past the start.
  int64_t checkpoint_step = 0;
  for (int i = 0; i < 2400 && checkpoint_step < 80; ++i) {
    const std::string latest = fs::exists(ck) ? LatestCheckpoint(ck.string()) : "";
    if (!latest.empty()) checkpoint_step = std::stoll(fs::path(latest).stem().string().substr(5));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_GE(checkpoint_step, 80) << hub->Log();
  hub->Signal(SIGKILL);
  EXPECT_EQ(hub->Wait(10), 128 + SIGKILL);
  const int64_t latest = LoadCheckpoint(LatestCheckpoint(ck.string())).step;
  ASSERT_LT(latest, 300) << "the epoch was nearly over before the kill; the test proves little";

  std::vector<std::string> second = run;
  second.insert(second.end(), {"--resume", ck.string()});
  std::unique_ptr<ChildProcess> resumed;
  ASSERT_EQ(StartHub(resumed, dir, second, port, "hub2.log"), port);
  for (auto& w : workers) EXPECT_EQ(w->Wait(600), 0) << w->Log();
  ASSERT_EQ(resumed->Wait(60), 0) << resumed->Log();
  const std::string report = test_support::ReadAll(dir / "hub.json");
  EXPECT_EQ(test_support::JsonNumber(report, "resumed_from_step"), latest) << report;
  EXPECT_EQ(test_support::JsonNumber(report, "steps"), 313) << report;
  EXPECT_GE(test_support::JsonNumber(report, "test_accuracy"), 0.84) << report;
  // No step trained twice: the resumed hub trained only the steps after the
  // checkpoint, 192 samples each (96 in the epoch's last).
  const double samples = test_support::JsonNumber(report, "samples");
  EXPECT_LE(samples, 60000 - 192 * latest) << report;
  EXPECT_GE(samples, 60000 - 192 * latest - 3 * 192) << report;
  for (int i = 0; i < 3; ++i) {
    const std::string w = test_support::ReadAll(dir / ("w" + std::to_string(i) + ".json"));
    EXPECT_GE(test_support::JsonNumber(w, "reconnects"), 1) << w;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mt
