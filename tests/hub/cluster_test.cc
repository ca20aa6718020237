// Real mthub and mtworker processes on 127.0.0.1, as a user runs them.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "tests/support/cluster_processes.h"
#include "tests/support/idx_writer.h"
#include "tests/support/files.h"
#include "tests/support/subprocess.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using test_support::BinaryPath;
using test_support::ChildProcess;

using test_support::StartHub;
using test_support::StartWorker;

TEST(Cluster, HubAndThreeWorkerProcessesTrainFashionMnistForOneEpoch) {
  if (!fs::exists("/usr/share/datasets/fashion-mnist"))
    GTEST_SKIP() << "dataset-fashion-mnist is not installed (deploy/install-deps.sh installs it)";
  const fs::path dir = test_support::FreshTempDir("cluster-e2e");
  std::unique_ptr<ChildProcess> hub;
  const int port = StartHub(hub, dir, {"--workers", "3", "--epochs", "1", "--report", (dir / "hub.json").string()});
  ASSERT_GT(port, 0);
  std::vector<std::unique_ptr<ChildProcess>> workers;
  for (int i = 0; i < 3; ++i) workers.push_back(StartWorker(dir, "w" + std::to_string(i), port));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(workers[i]->Wait(600), 0) << workers[i]->Log();
  ASSERT_EQ(hub->Wait(60), 0) << hub->Log();
  const std::string report = test_support::ReadAll(dir / "hub.json");
  EXPECT_GE(test_support::JsonNumber(report, "test_accuracy"), 0.84) << report;
  EXPECT_EQ(test_support::JsonNumber(report, "samples"), 60000) << report;
  for (const char* key : {"train_loss", "last_step_loss", "steps", "train_seconds", "samples_per_second", "peak_rss_bytes"})
    EXPECT_FALSE(std::isnan(test_support::JsonNumber(report, key))) << key;
  // Balanced batches follow each worker's speed, so the shares differ, but
  // every worker takes part and together they cover the epoch once.
  double samples = 0;
  for (int i = 0; i < 3; ++i) {
    EXPECT_NE(report.find("\"name\": \"w" + std::to_string(i) + "\""), std::string::npos) << report;
    const double own = test_support::JsonNumber(test_support::ReadAll(dir / ("w" + std::to_string(i) + ".json")), "samples");
    EXPECT_GT(own, 5000) << report;
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
    port = StartHub(probe, dir, {"--workers", "1", "--dataset", dir.string(), "--steps", "1"});
    probe->Signal(SIGTERM);
    EXPECT_EQ(probe->Wait(30), 0) << probe->Log();
  }
  ASSERT_GT(port, 0);
  auto worker = StartWorker(dir, "early", port);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  auto hub = std::make_unique<ChildProcess>(
      std::vector<std::string>{BinaryPath("hub/mthub"), "--bind", "127.0.0.1", "--port", std::to_string(port),
                               "--workers", "1", "--dataset", dir.string(), "--epochs", "5", "--steps", "30"},
      (dir / "hub2.log").string());
  EXPECT_EQ(worker->Wait(120), 0) << worker->Log();
  EXPECT_EQ(hub->Wait(60), 0) << hub->Log();
  EXPECT_NE(worker->Log().find("not up yet"), std::string::npos) << worker->Log();
  EXPECT_EQ(test_support::JsonNumber(test_support::ReadAll(dir / "early.json"), "steps"), 30);
  fs::remove_all(dir);
}

// A worker computing on OpenCL keeps its parameters and optimizer on the
// CPU, so its weights stay bit-identical to the hub's: a digest every step
// and no resync.
TEST(Cluster, AnOpenClWorkerAndACpuWorkerTrainInStep) {
  const fs::path dir = test_support::FreshTempDir("cluster-opencl");
  const auto probe = test_support::RunProcess({BinaryPath("worker/mtworker"), "--standalone", "--device", "opencl",
                                          "--steps", "1", "--dataset", "/nonexistent-dataset"},
                                         60);
  if (probe.output.find("--device opencl") != std::string::npos)
    GTEST_SKIP() << "no OpenCL here: " << probe.output;
  test_support::WriteIdxDataset(dir.string(), 1000, 100, 5);
  std::unique_ptr<ChildProcess> hub;
  const int port = StartHub(hub, dir, {"--workers", "2", "--dataset", dir.string(), "--epochs", "10", "--steps", "40",
                                       "--digest-every", "1", "--report", (dir / "hub.json").string()});
  ASSERT_GT(port, 0);
  auto gpu = StartWorker(dir, "gpu", port, {"--device", "opencl"});
  auto cpu = StartWorker(dir, "cpu", port, {"--device", "cpu"});
  EXPECT_EQ(gpu->Wait(300), 0) << gpu->Log();
  EXPECT_EQ(cpu->Wait(300), 0) << cpu->Log();
  ASSERT_EQ(hub->Wait(60), 0) << hub->Log();
  const std::string report = test_support::ReadAll(dir / "hub.json");
  EXPECT_EQ(test_support::JsonNumber(report, "steps"), 40) << report;
  EXPECT_NE(report.find("conv1:opencl"), std::string::npos) << report;
  EXPECT_NE(report.find("conv1:cpu"), std::string::npos) << report;
  size_t resync_zero = 0;
  for (size_t at = report.find("\"resyncs\": 0"); at != std::string::npos; at = report.find("\"resyncs\": 0", at + 1))
    ++resync_zero;
  EXPECT_EQ(resync_zero, 2u) << report;
  fs::remove_all(dir);
}

TEST(Cluster, HubSigtermSaysGoodbyeAndCheckpoints) {
  const fs::path dir = test_support::FreshTempDir("cluster-sigterm");
  test_support::WriteIdxDataset(dir.string(), 4000, 100, 6);
  std::unique_ptr<ChildProcess> hub;
  const int port = StartHub(hub, dir,
                            {"--workers", "1", "--dataset", dir.string(), "--epochs", "1000", "--checkpoint-dir",
                             (dir / "ck").string(), "--report", (dir / "hub.json").string()});
  ASSERT_GT(port, 0);
  auto worker = StartWorker(dir, "w", port);
  // Stop only once training is under way, however slow the machine.
  for (int i = 0; i < 1200 && worker->Log().find("received the model") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  hub->Signal(SIGTERM);
  EXPECT_EQ(hub->Wait(30), 0) << hub->Log();
  EXPECT_EQ(worker->Wait(30), 0) << worker->Log();
  EXPECT_NE(worker->Log().find("hub shutting down"), std::string::npos) << worker->Log();
  bool checkpoint = false;
  for (auto& e : fs::directory_iterator(dir / "ck")) checkpoint = checkpoint || e.path().extension() == ".mtc";
  EXPECT_TRUE(checkpoint);
  EXPECT_GT(test_support::JsonNumber(test_support::ReadAll(dir / "hub.json"), "steps"), 0);
  fs::remove_all(dir);
}

TEST(Cluster, AMemoryBudgetCapsAWorkersBatch) {
  const fs::path dir = test_support::FreshTempDir("cluster-memory");
  test_support::WriteIdxDataset(dir.string(), 16 * 128, 100, 5);  // whole steps only
  std::unique_ptr<ChildProcess> hub;
  const int port = StartHub(hub, dir, {"--workers", "2", "--dataset", dir.string(), "--epochs", "10", "--steps", "60",
                                       "--global-batch", "128", "--report", (dir / "hub.json").string()});
  ASSERT_GT(port, 0);
  // A budget that holds nothing is refused with what the model needs.
  auto tiny = StartWorker(dir, "tiny", port, {"--memory-budget", "64K"});
  EXPECT_EQ(tiny->Wait(60), 1) << tiny->Log();
  std::smatch m;
  const std::string refusal = tiny->Log();
  ASSERT_TRUE(std::regex_search(refusal, m, std::regex(R"(needs (\d+) KiB plus (\d+) KiB per sample)"))) << refusal;
  const int64_t fixed_kib = std::stoll(m[1]), per_sample_kib = std::stoll(m[2]);
  // Room for about 20 samples.
  const std::string budget = std::to_string(fixed_kib + 20 * per_sample_kib + per_sample_kib / 2) + "K";
  auto small = StartWorker(dir, "small", port, {"--memory-budget", budget});
  auto big = StartWorker(dir, "big", port);
  EXPECT_EQ(small->Wait(300), 0) << small->Log();
  EXPECT_EQ(big->Wait(300), 0) << big->Log();
  ASSERT_EQ(hub->Wait(60), 0) << hub->Log();
  const std::string small_report = test_support::ReadAll(dir / "small.json");
  const double cap = test_support::JsonNumber(small_report, "max_batch");
  EXPECT_GE(cap, 18) << small_report;
  EXPECT_LE(cap, 22) << small_report;
  const std::string report = test_support::ReadAll(dir / "hub.json");
  EXPECT_EQ(test_support::JsonNumber(report, "samples"), 60 * 128) << report;
  // Every step the small worker took at most its cap; the big one the rest.
  EXPECT_LE(test_support::JsonNumber(small_report, "samples"), 60 * cap) << small_report;
  EXPECT_GE(test_support::JsonNumber(test_support::ReadAll(dir / "big.json"), "samples"), 60 * (128 - cap)) << report;
  fs::remove_all(dir);
}

TEST(Cluster, BadCommandLinesAreClear) {
  auto r = test_support::RunProcess({BinaryPath("hub/mthub"), "--workers", "0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--workers"), std::string::npos) << r.output;
  r = test_support::RunProcess({BinaryPath("worker/mtworker")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--hub"), std::string::npos) << r.output;
  r = test_support::RunProcess({BinaryPath("hub/mthub"), "--dataset", "/nonexistent/data", "--port", "0"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("/nonexistent/data"), std::string::npos) << r.output;
  r = test_support::RunProcess({BinaryPath("hub/mthub"), "--workers", "2", "--min-workers", "3"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--min-workers"), std::string::npos) << r.output;
  r = test_support::RunProcess({BinaryPath("hub/mthub"), "--worker-batches", "8,8", "--batch-policy", "balanced"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--batch-policy"), std::string::npos) << r.output;
  r = test_support::RunProcess({BinaryPath("hub/mthub"), "--compress", "zip"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("int8"), std::string::npos) << r.output;
  r = test_support::RunProcess({BinaryPath("worker/mtworker"), "--hub", "127.0.0.1:1", "--memory-budget", "lots"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--memory-budget"), std::string::npos) << r.output;
  r = test_support::RunProcess({BinaryPath("hub/mthub"), "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("--global-batch"), std::string::npos);
}

}  // namespace
}  // namespace mt
