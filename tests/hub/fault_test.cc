// Faults a phone cluster meets, on real processes over 127.0.0.1: a worker
// killed outright, a worker frozen (SIGSTOP, as a phone's OS does to a
// background app), and the hub itself killed and restarted with --resume.
// The tests follow the run through the daemons' --events and reports. All
// in the per-step mode (--sync-every 1), whatever the machine's load; the
// same faults in rounds of local steps are in round_fault_test.cc.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>

#include "core/checkpoint/checkpoint.h"
#include "tests/support/cluster_processes.h"
#include "tests/support/events.h"
#include "tests/support/files.h"
#include "tests/support/idx_writer.h"
#include "tests/support/subprocess.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test_support::AwaitEvent;
using test_support::ChildProcess;
using test_support::EventsOf;
using test_support::ReadJson;
using test_support::StartHub;
using test_support::StartWorker;
using test_support::WaitForEvent;
using test_support::WaitForStep;

constexpr const char* kFashion = "/usr/share/datasets/fashion-mnist";

TEST(Faults, KillNineOfOneWorkerMidEpochThenItComesBack) {
  if (!fs::exists(kFashion)) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const fs::path dir = test_support::FreshTempDir("fault-kill-worker");
  const fs::path hub_events = EventsOf(dir, "hub");
  std::unique_ptr<ChildProcess> hub;
  const int port = StartHub(hub, dir,
                            {"--workers", "3", "--epochs", "1", "--sync-every", "1", "--log-every",
                             "0.1", "--report", (dir / "hub.json").string()});
  ASSERT_GT(port, 0);
  // Slowed down so the epoch lasts long enough to kill and restart in it.
  const std::vector<std::string> slow = {"--slowdown", "2"};
  auto w0 = StartWorker(dir, "w0", port, slow), w1 = StartWorker(dir, "w1", port, slow);
  auto w2 = StartWorker(dir, "w2", port, slow);
  ASSERT_TRUE(WaitForStep(hub_events, 40, 120)) << hub->Log();
  w2->Signal(SIGKILL);
  EXPECT_EQ(w2->Wait(10), 128 + SIGKILL);
  const json dropped = AwaitEvent(hub_events, "worker_dropped", {{"name", "w2"}}, 30);
  ASSERT_TRUE(dropped.is_object()) << hub->Log();
  const int64_t killed_at = dropped.value("step", int64_t{0});
  auto back = StartWorker(dir, "w2back", port, slow);
  EXPECT_EQ(w0->Wait(600), 0) << w0->Log();
  EXPECT_EQ(w1->Wait(600), 0) << w1->Log();
  EXPECT_EQ(back->Wait(600), 0) << back->Log();
  ASSERT_EQ(hub->Wait(60), 0) << hub->Log();
  const json report = ReadJson(dir / "hub.json");
  EXPECT_EQ(report.value("steps", int64_t{0}), 313) << report.dump(2);
  EXPECT_GE(report.value("test_accuracy", -1.0), 0.84) << report.dump(2);
  // The step w2 died in went on with the others' samples only.
  EXPECT_GE(report.value("samples", int64_t{0}), 60000 - 192) << report.dump(2);
  ASSERT_LT(killed_at, 300)
      << "the epoch was nearly over before the restart; the test proves little";
  EXPECT_GT(ReadJson(dir / "w2back.json").value("steps", int64_t{0}), 0) << back->Log();
  EXPECT_GT(test_support::ReportedWorker(report, "w2back").value("steps", int64_t{0}), 0)
      << report.dump(2);
  fs::remove_all(dir);
}

TEST(Faults, AFrozenWorkerIsLeftOutAfterTheDeadlineAndResyncsWhenItThaws) {
  const fs::path dir = test_support::FreshTempDir("fault-sigstop");
  const fs::path hub_events = EventsOf(dir, "hub");
  test_support::WriteIdxDataset(dir.string(), 2000, 100, 9);
  std::unique_ptr<ChildProcess> hub;
  const int port =
      StartHub(hub, dir,
               {"--workers", "2", "--dataset", dir.string(), "--epochs", "1000", "--steps", "1500",
                "--global-batch", "64", "--deadline-floor", "1", "--sync-every", "1", "--log-every",
                "0.1", "--report", (dir / "hub.json").string()});
  ASSERT_GT(port, 0);
  auto a = StartWorker(dir, "a", port, {"--slowdown", "2"});
  auto b = StartWorker(dir, "b", port, {"--slowdown", "2"});
  ASSERT_TRUE(WaitForStep(hub_events, 30, 120)) << hub->Log();
  b->Signal(SIGSTOP);
  const json left_out = AwaitEvent(hub_events, "worker_left_out", {{"name", "b"}}, 30);
  ASSERT_TRUE(left_out.is_object()) << hub->Log();
  // The hub goes on with a alone.
  const int64_t left_out_at = left_out.value("step", int64_t{0});
  EXPECT_TRUE(WaitForStep(hub_events, left_out_at + 20, 60)) << hub->Log();
  b->Signal(SIGCONT);
  EXPECT_TRUE(WaitForEvent(hub_events, "worker_back", {{"name", "b"}}, 30)) << hub->Log();
  // Once at the start, once more when it rejoined: the whole state again.
  EXPECT_TRUE(WaitForEvent(EventsOf(dir, "b"), "state_received", {}, 30, 2)) << b->Log();
  EXPECT_EQ(a->Wait(300), 0) << a->Log();
  EXPECT_EQ(b->Wait(300), 0) << b->Log();
  ASSERT_EQ(hub->Wait(60), 0) << hub->Log();
  const json hub_report = ReadJson(dir / "hub.json");
  EXPECT_EQ(hub_report.value("steps", int64_t{0}), 1500) << hub_report.dump(2);
  EXPECT_GE(test_support::ReportedWorker(hub_report, "b").value("steps_missed", int64_t{0}), 1)
      << hub_report.dump(2);
  const json b_report = ReadJson(dir / "b.json");
  EXPECT_GE(b_report.value("steps_left_out", int64_t{0}), 1) << b_report.dump(2);
  EXPECT_GE(b_report.value("resyncs", int64_t{0}), 1) << b_report.dump(2);
  // It trained again after the resync: steps beyond those before the freeze.
  EXPECT_GT(b_report.value("steps", int64_t{0}), left_out_at + 1) << b_report.dump(2);
  fs::remove_all(dir);
}

TEST(Faults, HubKilledAndResumedFromItsCheckpointFinishesTheRun) {
  if (!fs::exists(kFashion)) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const fs::path dir = test_support::FreshTempDir("fault-hub-resume");
  const fs::path ck = dir / "ck";
  const std::vector<std::string> run = {
      "--workers",          "3",  "--sync-every", "1",   "--epochs", "1",
      "--checkpoint-every", "40", "--log-every",  "0.1", "--report", (dir / "hub.json").string()};
  std::unique_ptr<ChildProcess> hub;
  std::vector<std::string> first = run;
  first.insert(first.end(), {"--checkpoint-dir", ck.string()});
  const int port = StartHub(hub, dir, first);
  ASSERT_GT(port, 0);
  std::vector<std::unique_ptr<ChildProcess>> workers;
  for (int i = 0; i < 3; ++i)
    workers.push_back(StartWorker(dir, "w" + std::to_string(i), port,
                                  {"--slowdown", "2", "--connect-timeout", "120"}));
  // Kill it once it has a checkpoint past the start.
  ASSERT_TRUE(test_support::WaitForEvents(
      EventsOf(dir, "hub"),
      [](const test_support::Events& events) {
        for (const auto& e : events)
          if (e.value("event", "") == "checkpoint_saved" && e.value("step", int64_t{0}) >= 80)
            return true;
        return false;
      },
      120))
      << hub->Log();
  hub->Signal(SIGKILL);
  EXPECT_EQ(hub->Wait(10), 128 + SIGKILL);
  const int64_t latest = NewestValidCheckpoint(ck.string()).checkpoint.step;
  ASSERT_LT(latest, 300) << "the epoch was nearly over before the kill; the test proves little";

  std::vector<std::string> second = run;
  second.insert(second.end(), {"--resume", ck.string()});
  std::unique_ptr<ChildProcess> resumed;
  ASSERT_EQ(StartHub(resumed, dir, second, port, "hub2.log"), port);
  for (auto& w : workers) EXPECT_EQ(w->Wait(600), 0) << w->Log();
  ASSERT_EQ(resumed->Wait(60), 0) << resumed->Log();
  const json report = ReadJson(dir / "hub.json");
  EXPECT_EQ(report.value("resumed_from_step", int64_t{-1}), latest) << report.dump(2);
  EXPECT_EQ(report.value("steps", int64_t{0}), 313) << report.dump(2);
  EXPECT_GE(report.value("test_accuracy", -1.0), 0.84) << report.dump(2);
  // No step trained twice: the resumed hub trained only the steps after the
  // checkpoint, 192 samples each (96 in the epoch's last).
  const int64_t samples = report.value("samples", int64_t{0});
  EXPECT_LE(samples, 60000 - 192 * latest) << report.dump(2);
  EXPECT_GE(samples, 60000 - 192 * latest - 3 * 192) << report.dump(2);
  for (int i = 0; i < 3; ++i) {
    const std::string name = "w" + std::to_string(i);
    EXPECT_GE(ReadJson(dir / (name + ".json")).value("reconnects", int64_t{0}), 1) << name;
    // It lost the first hub and joined the second.
    EXPECT_GE(test_support::CountEvents(EventsOf(dir, name), "hub_lost"), 1) << name;
    EXPECT_GE(test_support::CountEvents(EventsOf(dir, name), "joined"), 2) << name;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mt
