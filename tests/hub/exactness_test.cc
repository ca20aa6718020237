// The invariant of docs/architecture.md: one synchronous step with batches b_1..b_n gives the
// same weights as one step of a single process on the concatenated batch.
// Hub and three workers run as threads in this process over loopback.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <thread>

#include "core/data/dataset.h"
#include "core/data/sampler.h"
#include "core/model/model_spec.h"
#include "core/train/batch_buffer.h"
#include "hub/hub.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/dropout_hash.h"
#include "tests/support/files.h"
#include "tests/support/idx_writer.h"
#include "tests/support/in_process_cluster.h"
#include "tests/support/single_process.h"
#include "worker/worker_config.h"
#include "worker/worker_control.h"

namespace mt {
namespace {

namespace fs = std::filesystem;

TEST(Exactness, ThreeWorkersWithUnequalBatchesMatchOneProcess) {
  const fs::path dir = fs::temp_directory_path() / ("mt-exact-" + std::to_string(getpid()));
  fs::create_directories(dir);
  test_support::WriteIdxDataset(dir.string(), 2000, 200, 3);

  HubConfig hc;
  hc.local_sgd.sync_every = 1;          // the exact per-step mode, whatever the machine's load
  hc.compression = Compression::kNone;  // likewise: auto encodes an exchange slowed by load
  hc.worker_batches = {16, 32, 16};
  // The exact batch-weighted mean; auto clips whoever strays, and a batch
  // of 16 strays further from the others than one of 32.
  hc.aggregate = Aggregation::kMean;
  hc.max_steps = 20;
  hc.seed = 7;
  hc.digest_every = 5;
  // TrainInProcess checks that the hub and every worker exit 0.
  std::vector<float> distributed;
  const nlohmann::json report = test_support::TrainInProcess(hc, dir, 3, &distributed);
  ASSERT_EQ(report["steps"], 20);

  const std::vector<float> single = test_support::SingleProcess(dir.string(), 7, 64, 20);
  ASSERT_EQ(distributed.size(), single.size());
  double worst = 0, scale = 0, moved = 0;
  kernels::CpuBackend backend;
  auto init = BuildModel(LoadModelSpec("lenet5"), backend);
  init->Reserve(1);
  init->InitParams(7);
  std::vector<float> w0(init->ParamCount());
  init->GetParams(w0.data());
  for (size_t i = 0; i < single.size(); ++i) {
    worst = std::max(worst, static_cast<double>(std::fabs(distributed[i] - single[i])));
    scale = std::max(scale, static_cast<double>(std::fabs(single[i])));
    moved = std::max(moved, static_cast<double>(std::fabs(single[i] - w0[i])));
  }
  EXPECT_LE(worst, 1e-5 * scale) << "max difference " << worst << " against max weight " << scale;
  // Training really moved the weights, so agreement is not trivial.
  EXPECT_GT(moved, 1e-2);
  fs::remove_all(dir);
}

TEST(LocalData, AWorkerTrainsOnItsOwnFilesBesideASharedOne) {
  const fs::path dir = fs::temp_directory_path() / ("mt-local-" + std::to_string(getpid()));
  fs::create_directories(dir / "shared");
  fs::create_directories(dir / "private");
  test_support::WriteIdxDataset((dir / "shared").string(), 1500, 300, 11);
  test_support::WriteIdxDataset((dir / "private").string(), 700, 10, 12);

  HubConfig hc;
  hc.local_sgd.sync_every = 1;          // the exact per-step mode, whatever the machine's load
  hc.compression = Compression::kNone;  // likewise: auto encodes an exchange slowed by load
  hc.workers = 2;
  hc.bind = "127.0.0.1";
  hc.port = 0;
  hc.dataset = (dir / "shared").string();
  hc.epochs = 5;
  hc.max_steps = 60;
  hc.patience = 0;
  Hub hub(hc);
  hub.Start();
  std::thread hub_thread([&] { hub.Run(); });
  std::vector<int> codes(2, -1);
  std::vector<std::thread> workers;
  for (int i = 0; i < 2; ++i)
    workers.emplace_back([&, i] {
      WorkerConfig wc;
      wc.hub = "127.0.0.1:" + std::to_string(hub.port());
      if (i == 1) wc.data_dir = (dir / "private").string();
      wc.report_path = (dir / ("w" + std::to_string(i) + ".json")).string();
      WorkerControl control;
      codes[i] = RunWorker(wc, control);
    });
  for (auto& t : workers) t.join();
  hub_thread.join();
  EXPECT_EQ(codes, (std::vector<int>{0, 0}));
  EXPECT_EQ(hub.steps_done(), 60);
  // Each worker's report says whose files it trained on.
  EXPECT_EQ(test_support::ReadJson(dir / "w1.json").value("local_data", false), true);
  EXPECT_EQ(test_support::ReadJson(dir / "w0.json").value("local_data", true), false);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mt
