// mthub --secure-aggregation with real processes over TLS on 127.0.0.1: a
// worker that stops answering in the middle of a round, and is then
// killed, is recovered (its pair masks come off the survivors' updates
// from the shares they hold of its mask key) and the round, and the run,
// complete with the others.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <memory>

#include "tests/support/cluster_processes.h"
#include "tests/support/events.h"
#include "tests/support/files.h"
#include "tests/support/idx_writer.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test_support::ChildProcess;

TEST(SecureAggregationE2e, AWorkerLostMidRoundIsUnmaskedFromTheOthersShares) {
  const fs::path dir = test_support::FreshTempDir("secagg-kill");
  test_support::WriteIdxDataset(dir.string(), 3000, 300, 7);
  const fs::path hub_events = test_support::EventsOf(dir, "hub");
  std::unique_ptr<ChildProcess> hub;
  const int port = test_support::StartHub(
      hub, dir,
      {"--workers", "3", "--secure-aggregation", "--dataset", dir.string(), "--steps", "40",
       "--sync-every", "1", "--batch-policy", "fixed", "--deadline-floor", "1", "--log-every",
       "0.1", "--report", (dir / "hub.json").string()});
  ASSERT_GT(port, 0);
  auto a = test_support::StartWorker(dir, "a", port);
  auto b = test_support::StartWorker(dir, "b", port);
  auto victim = test_support::StartWorker(dir, "victim", port);
  ASSERT_TRUE(test_support::WaitForStep(hub_events, 3, 120)) << hub->Log();
  // Frozen wherever it is: the round it holds a plan for (this one, or the
  // next, whose bundle it has sent) goes on without its update once the
  // deadline passes; then it dies.
  victim->Signal(SIGSTOP);
  ASSERT_TRUE(test_support::WaitForEvent(hub_events, "worker_left_out", {{"name", "victim"}}, 60))
      << hub->Log();
  victim->Signal(SIGKILL);
  EXPECT_EQ(victim->Wait(10), 128 + SIGKILL);
  EXPECT_EQ(a->Wait(300), 0) << a->Log();
  EXPECT_EQ(b->Wait(300), 0) << b->Log();
  ASSERT_EQ(hub->Wait(60), 0) << hub->Log();
  const json report = test_support::ReadJson(dir / "hub.json");
  EXPECT_EQ(report.value("steps", int64_t{0}), 40) << report.dump(2);
  EXPECT_TRUE(report.value("secure_aggregation", false));
  EXPECT_EQ(report.value("secure_dropped_recovered", int64_t{0}), 1) << hub->Log();
  EXPECT_GE(report.value("secure_rounds", int64_t{0}), 40);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mt
