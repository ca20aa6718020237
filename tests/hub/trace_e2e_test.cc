// mthub --trace across real processes on 127.0.0.1: a hub and two workers
// train a few steps; the hub's file is one Chrome trace with a row per
// device (the hub, each worker named after it), the hub's own spans, every
// worker's per-layer forward and backward, encode, send and wait, and the
// workers' spans on the hub's clock (here the same host: offsets near 0,
// every span inside the hub's run). A worker's own --trace file is a
// trace of its own.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <string>

#include "tests/support/cluster_processes.h"
#include "tests/support/files.h"
#include "tests/support/idx_writer.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test_support::ChildProcess;

// Per process (by name): the titles of its complete events and their
// time range.
struct Row {
  int pid = -1;
  std::multiset<std::string> spans;
  int64_t begin = std::numeric_limits<int64_t>::max(), end = std::numeric_limits<int64_t>::min();
};

std::map<std::string, Row> RowsOf(const json& trace) {
  std::map<int, std::string> names;
  for (const json& e : trace["traceEvents"])
    if (e.value("ph", "") == "M" && e.value("name", "") == "process_name")
      names[e["pid"].get<int>()] = e["args"]["name"].get<std::string>();
  std::map<std::string, Row> rows;
  for (const json& e : trace["traceEvents"]) {
    if (e.value("ph", "") != "X") continue;
    EXPECT_TRUE(e["ts"].is_number_integer() && e["dur"].is_number_integer() &&
                e["pid"].is_number_integer() && e["tid"].is_number_integer())
        << e;
    const int pid = e["pid"].get<int>();
    EXPECT_TRUE(names.count(pid)) << "an event of an unnamed process: " << e;
    Row& row = rows[names[pid]];
    row.pid = pid;
    row.spans.insert(e["name"].get<std::string>());
    row.begin = std::min(row.begin, e["ts"].get<int64_t>());
    row.end = std::max(row.end, e["ts"].get<int64_t>() + e["dur"].get<int64_t>());
  }
  return rows;
}

json ReadTrace(const fs::path& p) {
  const json trace = json::parse(test_support::ReadAll(p), nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(trace.is_discarded()) << p << " is not JSON";
  EXPECT_TRUE(trace.is_object() && trace.contains("traceEvents")) << p;
  EXPECT_EQ(trace.value("displayTimeUnit", ""), "ms");
  return trace.is_discarded() ? json::object({{"traceEvents", json::array()}}) : trace;
}

TEST(TraceE2e, TheHubWritesOneTimelineOfItselfAndEveryWorker) {
  const fs::path dir = test_support::FreshTempDir("trace-e2e");
  test_support::WriteIdxDataset(dir.string(), 256, 64, 5);
  std::unique_ptr<ChildProcess> hub;
  const int port = test_support::StartHub(
      hub, dir,
      {"--workers", "2", "--dataset", dir.string(), "--steps", "6", "--global-batch", "32",
       "--sync-every", "1", "--eval-every", "3", "--checkpoint-dir", (dir / "ck").string(),
       "--insecure", "--trace", (dir / "hub-trace.json").string()});
  ASSERT_GT(port, 0);
  auto w0 = test_support::StartWorker(dir, "w0", port, {"--insecure"});
  auto w1 = test_support::StartWorker(dir, "w1", port,
                                      {"--insecure", "--trace", (dir / "w1-trace.json").string()});
  EXPECT_EQ(w0->Wait(120), 0) << w0->Log();
  EXPECT_EQ(w1->Wait(120), 0) << w1->Log();
  ASSERT_EQ(hub->Wait(60), 0) << hub->Log();

  const json trace = ReadTrace(dir / "hub-trace.json");
  std::map<std::string, Row> rows = RowsOf(trace);
  ASSERT_TRUE(rows.count("mthub") && rows.count("w0") && rows.count("w1"))
      << trace.dump(1).substr(0, 4000);
  const Row& hub_row = rows["mthub"];
  EXPECT_NE(rows["w0"].pid, rows["w1"].pid);
  EXPECT_NE(rows["w0"].pid, hub_row.pid);
  for (const char* span :
       {"receive w0", "receive w1", "reduce", "optimizer", "broadcast", "evaluation", "checkpoint"})
    EXPECT_TRUE(hub_row.spans.count(span)) << "no hub span " << span;
  for (const char* name : {"w0", "w1"}) {
    const Row& w = rows[name];
    for (const char* span :
         {"step", "forward conv1", "backward conv1", "forward fc3", "backward fc3", "loss",
          "encode", "send", "wait for result", "optimizer"})
      EXPECT_TRUE(w.spans.count(span)) << name << " has no span " << span;
    // Every step's layers (the last step's spans travel with its gradient).
    EXPECT_GE(w.spans.count("forward conv1"), 5u) << name;
    // On the hub's clock: inside the hub's own spans, give or take the
    // estimate's error, which on one host is well under a millisecond.
    EXPECT_GE(w.begin, hub_row.begin - 20'000) << name;
    EXPECT_LE(w.end, hub_row.end + 20'000) << name;
    const json& info = trace["otherData"]["processes"][name];
    EXPECT_GT(info.value("clock_samples", 0), 0) << name;
    EXPECT_LT(std::llabs(info.value("clock_offset_us", int64_t{1} << 40)), 20'000) << name;
    EXPECT_EQ(trace["otherData"]["dropped_spans"][name], 0) << name;
  }

  // w1's own file: its spans on its own clock, in a row named after it.
  const json own = ReadTrace(dir / "w1-trace.json");
  std::map<std::string, Row> own_rows = RowsOf(own);
  ASSERT_TRUE(own_rows.count("w1")) << own.dump(1).substr(0, 2000);
  EXPECT_EQ(own_rows.size(), 1u);
  EXPECT_GE(own_rows["w1"].spans.count("forward conv1"), 6u);
  EXPECT_TRUE(own_rows["w1"].spans.count("wait for result"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mt
