// mthub --resume from the checkpoint a finished run wrote last: nothing is
// left to train, so the hub ends at once instead of waiting for workers.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/support/idx_writer.h"
#include "tests/support/in_process_cluster.h"

namespace mt {
namespace {

namespace fs = std::filesystem;

TEST(Resume, AFinishedRunEndsAtOnceWithoutWaitingForWorkers) {
  const fs::path dir = test_support::FreshTempDir("resume-done");
  test_support::WriteIdxDataset(dir.string(), 600, 100, 4);
  HubConfig hc;
  hc.local_sgd.sync_every = 1;          // the exact per-step mode, whatever the machine's load
  hc.compression = Compression::kNone;  // likewise: auto encodes an exchange slowed by load
  hc.max_steps = 6;
  hc.checkpoint_dir = (dir / "ck").string();
  fs::create_directories(hc.checkpoint_dir);
  ASSERT_EQ(test_support::TrainInProcess(hc, dir, 1)["steps"], 6);

  hc.resume = true;
  hc.workers = 1;
  hc.bind = "127.0.0.1";
  hc.port = 0;
  hc.dataset = dir.string();
  hc.report_path = (dir / "again.json").string();
  Hub hub(hc);
  hub.Start();
  // No worker comes: before, Run waited for one forever.
  EXPECT_EQ(hub.Run(), 0);
  const nlohmann::json r = test_support::ReadJson(dir / "again.json");
  EXPECT_EQ(r["steps"], 6);
  EXPECT_EQ(r["resumed_from_step"], 6);
  EXPECT_EQ(r["stopped_early"], false);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mt
