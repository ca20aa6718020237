// mtworker --standalone --trace as a user runs it: the file is a Chrome
// trace of the run (one process row, each step with its layers' forward
// and backward, the loss, the optimizer, evaluation and checkpoints), and
// a trace that could not be kept fails the run before it trains.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "tests/support/files.h"
#include "tests/support/idx_writer.h"
#include "tests/support/subprocess.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test_support::RunProcess;
using ::testing::HasSubstr;

TEST(StandaloneTrace, TheRunsTimelineHasEveryStepsLayersAndTheOptimizer) {
  const fs::path dir = test_support::FreshTempDir("standalone-trace");
  test_support::WriteIdxDataset(dir.string(), 128, 32, 4);
  const fs::path out = dir / "trace.json";
  const auto r = RunProcess({test_support::BinaryPath("worker/mtworker"), "--standalone",
                             "--dataset", dir.string(), "--steps", "4", "--batch", "16",
                             "--checkpoint-dir", (dir / "ck").string(), "--trace", out.string()},
                            120);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json trace = json::parse(test_support::ReadAll(out), nullptr, false);
  ASSERT_FALSE(trace.is_discarded()) << test_support::ReadAll(out);
  EXPECT_EQ(trace.value("displayTimeUnit", ""), "ms");
  std::map<std::string, int> count;
  std::set<int> pids;
  std::string process;
  for (const json& e : trace["traceEvents"]) {
    pids.insert(e["pid"].get<int>());
    if (e["ph"] == "M" && e["name"] == "process_name") process = e["args"]["name"];
    if (e["ph"] != "X") continue;
    ASSERT_TRUE(e["ts"].is_number_integer() && e["dur"].is_number_integer()) << e;
    ++count[e["name"].get<std::string>()];
  }
  EXPECT_EQ(pids.size(), 1u);
  EXPECT_EQ(process, "mtworker --standalone");
  EXPECT_EQ(count["step"], 4);
  for (const char* layer : {"conv1", "pool1", "fc1", "fc3"}) {
    EXPECT_EQ(count[std::string("forward ") + layer], 4) << layer;
    EXPECT_EQ(count[std::string("backward ") + layer], 4) << layer;
  }
  EXPECT_EQ(count["loss"], 4);
  EXPECT_EQ(count["optimizer"], 4);
  EXPECT_GE(count["evaluation"], 1);
  EXPECT_GE(count["checkpoint"], 1);
  EXPECT_EQ(trace["otherData"]["dropped_spans"]["mtworker --standalone"], 0);
  fs::remove_all(dir);
}

TEST(StandaloneTrace, ATraceInAMissingDirectoryFailsBeforeTraining) {
  const fs::path dir = test_support::FreshTempDir("standalone-trace-missing");
  test_support::WriteIdxDataset(dir.string(), 64, 16, 4);
  const auto r = RunProcess({test_support::BinaryPath("worker/mtworker"), "--standalone",
                             "--dataset", dir.string(), "--steps", "2", "--batch", "16", "--trace",
                             (dir / "no" / "trace.json").string()},
                            60);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--trace"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mt
