// Real mthub and mtworker processes on 127.0.0.1, as a user runs them. What
// they did is read from their reports and --events files, not their logs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "tests/support/cifar_writer.h"
#include "tests/support/cluster_processes.h"
#include "tests/support/events.h"
#include "tests/support/files.h"
#include "tests/support/history_check.h"
#include "tests/support/idx_writer.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_backends.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test_support::BinaryPath;
using test_support::ChildProcess;
using test_support::EventsOf;
using test_support::ReadJson;
using test_support::ReportedWorker;
using test_support::StartHub;
using test_support::StartWorker;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;

TEST(Cluster, HubAndThreeWorkerProcessesTrainFashionMnistForOneEpoch) {
  if (!fs::exists("/usr/share/datasets/fashion-mnist"))
    GTEST_SKIP() << "dataset-fashion-mnist is not installed (deploy/install-deps.sh installs it)";
  const fs::path dir = test_support::FreshTempDir("cluster-e2e");
  std::unique_ptr<ChildProcess> hub;
  const int port = StartHub(
      hub, dir, {"--workers", "3", "--epochs", "1", "--report", (dir / "hub.json").string()});
  ASSERT_GT(port, 0);
  std::vector<std::unique_ptr<ChildProcess>> workers;
  for (int i = 0; i < 3; ++i) workers.push_back(StartWorker(dir, "w" + std::to_string(i), port));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(workers[i]->Wait(600), 0) << workers[i]->Log();
  ASSERT_EQ(hub->Wait(60), 0) << hub->Log();
  const json report = ReadJson(dir / "hub.json");
  EXPECT_GE(report.value("test_accuracy", -1.0), 0.84) << report.dump(2);
  EXPECT_EQ(report.value("samples", int64_t{0}), 60000) << report.dump(2);
  for (const char* key : {"train_loss", "last_step_loss", "steps", "train_seconds",
                          "samples_per_second", "peak_rss_bytes"})
    EXPECT_TRUE(report.contains(key) && report.at(key).is_number()) << key;
  EXPECT_GT(report.value("train_loss", -1.0), 0) << report.dump(2);
  const int64_t steps = report.value("steps", int64_t{0});
  test_support::ExpectHistoryCovers(report, 1, steps);
  const json& last = report["history"]["points"].back();
  for (int i = 0; i < 3; ++i)
    EXPECT_GT(last["batches"].value("w" + std::to_string(i), 0), 0) << last.dump();
  // Balanced batches follow each worker's speed, so the shares differ, but
  // every worker takes part and together they cover the epoch once.
  int64_t samples = 0;
  for (int i = 0; i < 3; ++i) {
    const std::string name = "w" + std::to_string(i);
    EXPECT_GT(ReportedWorker(report, name).value("samples", int64_t{0}), 5000) << report.dump(2);
    const json own_report = ReadJson(dir / (name + ".json"));
    const int64_t own = own_report.value("samples", int64_t{0});
    int64_t in_history = 0;
    for (const json& p : own_report["history"]["points"]) in_history += p.value("samples", 0);
    EXPECT_EQ(in_history, own) << name;
    EXPECT_GT(own, 5000) << name;
    samples += own;
  }
  EXPECT_EQ(samples, 60000);
  fs::remove_all(dir);
}

TEST(Cluster, WorkerStartedBeforeItsHubConnectsOnceTheHubIsUp) {
  const fs::path dir = test_support::FreshTempDir("cluster-early");
  test_support::WriteIdxDataset(dir.string(), 1000, 100, 5);
  // Find a free port by letting a first hub pick one, then reuse it.
  int port = 0;
  {
    std::unique_ptr<ChildProcess> probe;
    port = StartHub(probe, dir, {"--workers", "1", "--dataset", dir.string(), "--steps", "1"}, 0,
                    "probe.log");
    probe->Signal(SIGTERM);
    EXPECT_EQ(probe->Wait(30), 0) << probe->Log();
  }
  ASSERT_GT(port, 0);
  auto worker = StartWorker(dir, "early", port);
  // The hub comes up only once the worker has found nobody there.
  const fs::path events = EventsOf(dir, "early");
  ASSERT_TRUE(test_support::WaitForEvent(events, "waiting_for_hub", {}, 60)) << worker->Log();
  std::unique_ptr<ChildProcess> hub;
  ASSERT_EQ(
      StartHub(hub, dir,
               {"--workers", "1", "--dataset", dir.string(), "--epochs", "5", "--steps", "30"},
               port, "hub2.log"),
      port);
  EXPECT_EQ(worker->Wait(120), 0) << worker->Log();
  EXPECT_EQ(hub->Wait(60), 0) << hub->Log();
  // It kept trying, joined the hub once it was up, and trained its run.
  const test_support::Events seen = test_support::ReadEvents(events);
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.front().value("event", ""), "waiting_for_hub");
  EXPECT_EQ(test_support::CountEvents(seen, "joined"), 1) << worker->Log();
  EXPECT_EQ(test_support::CountEvents(seen, "goodbye", {{"steps", 30}}), 1) << worker->Log();
  EXPECT_EQ(ReadJson(dir / "early.json").value("steps", int64_t{0}), 30);
  fs::remove_all(dir);
}

// A worker computing on OpenCL keeps its parameters and optimizer on the
// CPU, so its weights stay bit-identical to the hub's: a digest every step
// and no resync.
TEST(Cluster, AnOpenClWorkerAndACpuWorkerTrainInStep) {
  if (!test_support::HaveOpenCl()) GTEST_SKIP() << test_support::kNoOpenCl;
  const fs::path dir = test_support::FreshTempDir("cluster-opencl");
  test_support::WriteIdxDataset(dir.string(), 1000, 100, 5);
  std::unique_ptr<ChildProcess> hub;
  const int port =
      StartHub(hub, dir,
               {"--workers", "2", "--dataset", dir.string(), "--epochs", "10", "--steps", "40",
                "--digest-every", "1", "--report", (dir / "hub.json").string()});
  ASSERT_GT(port, 0);
  auto gpu = StartWorker(dir, "gpu", port, {"--device", "opencl"});
  auto cpu = StartWorker(dir, "cpu", port, {"--device", "cpu"});
  EXPECT_EQ(gpu->Wait(300), 0) << gpu->Log();
  EXPECT_EQ(cpu->Wait(300), 0) << cpu->Log();
  ASSERT_EQ(hub->Wait(60), 0) << hub->Log();
  const json report = ReadJson(dir / "hub.json");
  EXPECT_EQ(report.value("steps", int64_t{0}), 40) << report.dump(2);
  const json on_gpu = ReportedWorker(report, "gpu"), on_cpu = ReportedWorker(report, "cpu");
  EXPECT_EQ(test_support::PlacementOf(on_gpu.value("placement", ""))["conv1"], "opencl")
      << on_gpu.dump(2);
  for (const auto& [layer, where] : test_support::PlacementOf(on_cpu.value("placement", "")))
    EXPECT_EQ(where, "cpu") << layer;
  EXPECT_EQ(on_gpu.value("resyncs", -1), 0) << on_gpu.dump(2);
  EXPECT_EQ(on_cpu.value("resyncs", -1), 0) << on_cpu.dump(2);
  fs::remove_all(dir);
}

TEST(Cluster, HubSigtermSaysGoodbyeAndCheckpoints) {
  const fs::path dir = test_support::FreshTempDir("cluster-sigterm");
  test_support::WriteIdxDataset(dir.string(), 4000, 100, 6);
  std::unique_ptr<ChildProcess> hub;
  const int port = StartHub(hub, dir,
                            {"--workers", "1", "--dataset", dir.string(), "--epochs", "1000",
                             "--checkpoint-dir", (dir / "ck").string(), "--log-every", "0.1",
                             "--report", (dir / "hub.json").string()});
  ASSERT_GT(port, 0);
  auto worker = StartWorker(dir, "w", port);
  // Stop only once training is under way, however slow the machine.
  ASSERT_TRUE(test_support::WaitForStep(EventsOf(dir, "hub"), 1, 120)) << hub->Log();
  hub->Signal(SIGTERM);
  EXPECT_EQ(hub->Wait(30), 0) << hub->Log();
  EXPECT_EQ(worker->Wait(30), 0) << worker->Log();
  const json report = ReadJson(dir / "hub.json");
  const int64_t steps = report.value("steps", int64_t{0});
  EXPECT_GT(steps, 0) << report.dump(2);
  EXPECT_TRUE(report.value("stopped_early", false)) << report.dump(2);
  // The worker heard the hub's own reason, not a broken stream.
  const fs::path worker_events = EventsOf(dir, "w");
  const json goodbye = {{"reason", report.value("stop_reason", "?")}, {"steps", steps}};
  EXPECT_EQ(test_support::CountEvents(worker_events, "goodbye", goodbye), 1)
      << test_support::ReadAll(worker_events);
  EXPECT_EQ(test_support::CountEvents(worker_events, "hub_lost"), 0);
  // Its last act: a checkpoint of where it stopped.
  const json saved =
      test_support::AwaitEvent(EventsOf(dir, "hub"), "checkpoint_saved", {{"step", steps}}, 0);
  ASSERT_TRUE(saved.is_object()) << test_support::ReadAll(EventsOf(dir, "hub"));
  EXPECT_TRUE(fs::exists(saved.value("detail", ""))) << saved.dump();
  fs::remove_all(dir);
}

TEST(Cluster, AMemoryBudgetCapsAWorkersBatch) {
  const fs::path dir = test_support::FreshTempDir("cluster-memory");
  test_support::WriteIdxDataset(dir.string(), 16 * 128, 100, 5);  // whole steps only
  std::unique_ptr<ChildProcess> hub;
  const int port =
      StartHub(hub, dir,
               {"--workers", "2", "--dataset", dir.string(), "--epochs", "10", "--steps", "60",
                "--global-batch", "128", "--report", (dir / "hub.json").string()});
  ASSERT_GT(port, 0);
  // A budget that holds nothing is refused, and the error tells the user
  // what the model needs: the numbers a budget is sized from.
  auto tiny = StartWorker(dir, "tiny", port, {"--memory-budget", "64K"});
  EXPECT_EQ(tiny->Wait(60), 1) << tiny->Log();
  const std::string refusal = tiny->Log();
  ASSERT_THAT(refusal, ContainsRegex("needs [0-9]+ KiB plus [0-9]+ KiB per sample"));
  std::smatch m;
  std::regex_search(refusal, m, std::regex(R"(needs (\d+) KiB plus (\d+) KiB per sample)"));
  const int64_t fixed_kib = std::stoll(m[1]), per_sample_kib = std::stoll(m[2]);
  // Room for about 20 samples.
  const std::string budget =
      std::to_string(fixed_kib + 20 * per_sample_kib + per_sample_kib / 2) + "K";
  auto small = StartWorker(dir, "small", port, {"--memory-budget", budget});
  auto big = StartWorker(dir, "big", port);
  EXPECT_EQ(small->Wait(300), 0) << small->Log();
  EXPECT_EQ(big->Wait(300), 0) << big->Log();
  ASSERT_EQ(hub->Wait(60), 0) << hub->Log();
  EXPECT_EQ(test_support::CountEvents(EventsOf(dir, "hub"), "worker_joined", {{"name", "tiny"}}),
            0);
  const json small_report = ReadJson(dir / "small.json");
  const int64_t cap = small_report.value("max_batch", int64_t{0});
  EXPECT_GE(cap, 18) << small_report.dump(2);
  EXPECT_LE(cap, 22) << small_report.dump(2);
  const json report = ReadJson(dir / "hub.json");
  EXPECT_EQ(report.value("samples", int64_t{0}), 60 * 128) << report.dump(2);
  EXPECT_EQ(ReportedWorker(report, "small").value("max_batch", int64_t{0}), cap) << report.dump(2);
  // Every step the small worker took at most its cap; the big one the rest.
  EXPECT_LE(small_report.value("samples", int64_t{0}), 60 * cap) << small_report.dump(2);
  EXPECT_GE(ReadJson(dir / "big.json").value("samples", int64_t{0}), 60 * (128 - cap))
      << report.dump(2);
  fs::remove_all(dir);
}

// mobilenet-tiny at a global batch of 128 in 240 MiB: without
// recomputation a sample takes ~3.3 MiB (the cap would be ~70); the hub
// judges the budget by the figure with it, and the worker turns it on.
TEST(Cluster, ABudgetThatHoldsTheBatchOnlyWithRecomputationGetsIt) {
  const fs::path dir = test_support::FreshTempDir("cluster-recompute");
  test_support::WriteCifarDataset(dir, 512, 64, 5);
  std::unique_ptr<ChildProcess> hub;
  const int port = StartHub(hub, dir,
                            {"--workers", "1", "--model", "mobilenet-tiny", "--dataset",
                             dir.string(), "--epochs", "0", "--steps", "2", "--global-batch", "128",
                             "--report", (dir / "hub.json").string()});
  ASSERT_GT(port, 0);
  auto worker =
      StartWorker(dir, "phone", port, {"--memory-budget", "240M", "--allow-data", dir.string()});
  EXPECT_EQ(worker->Wait(300), 0) << worker->Log();
  ASSERT_EQ(hub->Wait(60), 0) << hub->Log();
  const json report = ReadJson(dir / "phone.json");
  EXPECT_EQ(report.value("max_batch", 0), 128) << report.dump(2);
  EXPECT_EQ(report.value("recompute", false), true) << report.dump(2);
  EXPECT_EQ(report.value("recompute_for_budget", false), true) << report.dump(2);
  EXPECT_EQ(report.value("samples", int64_t{0}), 2 * 128) << report.dump(2);
  fs::remove_all(dir);
}

// Exit codes: 2 for a command line that is wrong, 1 for a run that cannot
// start, 0 for --help. The wording of each message is checked with the
// flags themselves (hub_cli_e2e_test.cc, tests/worker/cli_e2e_test.cc).
TEST(Cluster, BadCommandLinesAreClear) {
  auto r = test_support::RunProcess({BinaryPath("hub/mthub"), "--workers", "0"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = test_support::RunProcess({BinaryPath("worker/mtworker")});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = test_support::RunProcess(
      {BinaryPath("hub/mthub"), "--dataset", "/nonexistent/data", "--port", "0"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("/nonexistent/data"));
  r = test_support::RunProcess({BinaryPath("hub/mthub"), "--workers", "2", "--min-workers", "3"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = test_support::RunProcess(
      {BinaryPath("hub/mthub"), "--worker-batches", "8,8", "--batch-policy", "balanced"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = test_support::RunProcess({BinaryPath("hub/mthub"), "--compress", "zip"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = test_support::RunProcess(
      {BinaryPath("worker/mtworker"), "--hub", "127.0.0.1:1", "--memory-budget", "lots"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = test_support::RunProcess({BinaryPath("hub/mthub"), "--help"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

}  // namespace
}  // namespace mt
