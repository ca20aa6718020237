// mthub --partition through real processes: each worker picks, from the
// integers its JoinReply carries, exactly the per-class share the hub drew
// for it (its report against the hub's), and the run trains; in rounds with
// FedProx's term every worker's weights still equal the hub's at each sync
// point (a digest every step, no resync).
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/support/cluster_processes.h"
#include "tests/support/files.h"
#include "tests/support/idx_writer.h"
#include "tests/support/subprocess.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test_support::ReadJson;

TEST(PartitionE2e, EachWorkerTrainsOnTheShareTheHubDrewForIt) {
  const fs::path dir = test_support::FreshTempDir("partition-e2e");
  test_support::WriteIdxDataset(dir.string(), 3000, 300, 5);
  std::unique_ptr<test_support::ChildProcess> hub;
  const int port = test_support::StartHub(hub, dir,
                                          {"--workers", "3", "--dataset", dir.string(),
                                           "--partition", "dirichlet:0.3", "--epochs", "3",
                                           "--sync-every", "4", "--prox", "0.1", "--digest-every",
                                           "1", "--report", (dir / "hub.json").string()});
  ASSERT_GT(port, 0);
  std::vector<std::unique_ptr<test_support::ChildProcess>> workers;
  for (int i = 0; i < 3; ++i)
    workers.push_back(test_support::StartWorker(dir, "w" + std::to_string(i), port));
  for (auto& w : workers) EXPECT_EQ(w->Wait(300), 0) << w->Log();
  ASSERT_EQ(hub->Wait(60), 0) << hub->Log();
  const json r = ReadJson(dir / "hub.json");
  EXPECT_EQ(r["partition"], "dirichlet:0.3");
  const json& shares = r["partition_histograms"];
  ASSERT_EQ(shares.size(), 3u);
  // The shares tile the training set, and Dirichlet 0.3 made them differ.
  int64_t total = 0;
  for (const json& share : shares)
    for (const json& n : share) total += n.get<int64_t>();
  EXPECT_EQ(total, 3000);
  EXPECT_NE(shares[0], shares[1]);
  // Each worker (ids 0, 1, 2 in join order, whichever name it has) holds
  // one share exactly: every share is some worker's.
  std::set<json> held;
  for (int i = 0; i < 3; ++i) {
    const json w = ReadJson(dir / ("w" + std::to_string(i) + ".json"));
    ASSERT_TRUE(w.contains("partition_share")) << w.dump();
    held.insert(w["partition_share"]);
    EXPECT_EQ(w.value("resyncs", -1), 0) << w.dump();
    const json at_hub = test_support::ReportedWorker(r, "w" + std::to_string(i));
    EXPECT_GT(at_hub.value("digests_checked", 0), 8) << at_hub.dump();
    EXPECT_EQ(at_hub.value("resyncs", -1), 0) << at_hub.dump();
  }
  EXPECT_EQ(held, std::set<json>(shares.begin(), shares.end()));
  EXPECT_GT(r["test_accuracy"].get<double>(), 0.3);
  // A spec mthub cannot parse is a usage error.
  const auto bad = test_support::RunProcess(
      {test_support::BinaryPath("hub/mthub"), "--partition", "dirichlet:zero"}, 30);
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("dirichlet:ALPHA"), std::string::npos) << bad.output;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mt
