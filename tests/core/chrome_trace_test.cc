// The Chrome trace writer (core/trace/chrome_trace.h): the JSON parses, and
// has what Perfetto and chrome://tracing need: complete events ("X") with
// integer microseconds and integer pid and tid, metadata events ("M")
// naming every process and thread, and otherData saying what was dropped.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <set>
#include <string>

#include "core/trace/chrome_trace.h"
#include "core/util/atomic_file.h"
#include "tests/support/files.h"

namespace mt::trace {
namespace {

using nlohmann::json;

Span At(SpanKind kind, int64_t begin, int32_t dur, int32_t index, int32_t track, int64_t step) {
  Span s = MakeSpan(kind, begin, begin + dur, index, step);
  s.track = track;
  return s;
}

std::vector<TraceProcess> TwoDevices() {
  TraceProcess hub;
  hub.pid = 1;
  hub.name = "mthub";
  hub.threads = {{kTrackRun, "run"}, {kTrackReceiveBase + 4, "receive phone \"a\""}};
  hub.index_names = {{4, "phone \"a\""}};
  hub.spans = {At(SpanKind::kBarrierWait, 1000, 500, -1, kTrackRun, 0),
               At(SpanKind::kReceive, 1200, 250, 4, kTrackReceiveBase + 4, 0)};
  hub.dropped = 2;
  TraceProcess worker;
  worker.pid = 6;
  worker.name = "phone \"a\"";
  worker.threads = {{kTrackCompute, "compute"}};
  worker.index_names = {{0, "conv1"}, {1, "fc\xff"}};  // not UTF-8: replaced, not refused
  // On a clock 5 s ahead of the hub's: shifted back.
  worker.shift_us = -5'000'000;
  worker.spans = {At(SpanKind::kStep, 5'001'050, 300, -1, kTrackCompute, 0),
                  At(SpanKind::kForward, 5'001'060, 40, 0, kTrackCompute, 0),
                  At(SpanKind::kBackward, 5'001'200, 60, 1, kTrackCompute, 0),
                  At(SpanKind::kLocalStep, 5'001'400, 10, 2, kTrackCompute, 3)};
  worker.info = {{"clock_offset_us", 5'000'000}};
  return {hub, worker};
}

const json* Find(const json& events, const std::string& ph, const std::string& name, int pid) {
  for (const json& e : events)
    if (e.value("ph", "") == ph && e.value("name", "") == name && e.value("pid", -1) == pid)
      return &e;
  return nullptr;
}

TEST(ChromeTrace, ParsesAsJsonWithTheFieldsTraceViewersNeed) {
  const json trace = json::parse(ChromeTraceJson(TwoDevices(), {{"tool", "mt"}}));
  EXPECT_EQ(trace.value("displayTimeUnit", ""), "ms");
  ASSERT_TRUE(trace.contains("traceEvents") && trace["traceEvents"].is_array());
  const json& events = trace["traceEvents"];
  int complete = 0;
  for (const json& e : events) {
    ASSERT_TRUE(e.contains("ph") && e.contains("pid") && e.contains("name")) << e;
    EXPECT_TRUE(e["pid"].is_number_integer()) << e;
    EXPECT_TRUE(e["tid"].is_number_integer()) << e;
    if (e["ph"] == "X") {
      ++complete;
      for (const char* key : {"ts", "dur"}) {
        EXPECT_TRUE(e[key].is_number_integer()) << e;
        EXPECT_GE(e[key].get<int64_t>(), 0) << e;
      }
      EXPECT_TRUE(e["cat"].is_string()) << e;
      EXPECT_TRUE(e["args"].is_object()) << e;
    } else {
      EXPECT_EQ(e["ph"], "M") << e;
    }
  }
  EXPECT_EQ(complete, 6);
  // A row per process, named; threads named.
  const json* hub_name = Find(events, "M", "process_name", 1);
  const json* worker_name = Find(events, "M", "process_name", 6);
  ASSERT_NE(hub_name, nullptr);
  ASSERT_NE(worker_name, nullptr);
  EXPECT_EQ((*hub_name)["args"]["name"], "mthub");
  EXPECT_EQ((*worker_name)["args"]["name"], "phone \"a\"");
  EXPECT_NE(Find(events, "M", "process_sort_index", 6), nullptr);
  std::set<std::string> threads;
  for (const json& e : events)
    if (e["name"] == "thread_name") threads.insert(e["args"]["name"].get<std::string>());
  EXPECT_EQ(threads, (std::set<std::string>{"run", "receive phone \"a\"", "compute"}));
  // otherData: what each process dropped, its info, and the caller's.
  const json& other = trace["otherData"];
  EXPECT_EQ(other["dropped_spans"]["mthub"], 2);
  EXPECT_EQ(other["dropped_spans"]["phone \"a\""], 0);
  EXPECT_EQ(other["processes"]["phone \"a\""]["clock_offset_us"], 5'000'000);
  EXPECT_EQ(other["tool"], "mt");
}

TEST(ChromeTrace, SpansAreNamedShiftedOntoOneClockAndStartAtZero) {
  const json events = json::parse(ChromeTraceJson(TwoDevices()))["traceEvents"];
  const json* wait = Find(events, "X", "barrier wait", 1);
  const json* receive = Find(events, "X", "receive phone \"a\"", 1);
  const json* step = Find(events, "X", "step", 6);
  const json* forward = Find(events, "X", "forward conv1", 6);
  const json* local = Find(events, "X", "local step 3", 6);
  ASSERT_TRUE(wait && receive && step && forward && local) << events.dump(1);
  EXPECT_EQ((*wait)["ts"], 0);  // the earliest span
  EXPECT_EQ((*wait)["dur"], 500);
  EXPECT_EQ((*wait)["tid"], kTrackRun);
  EXPECT_EQ((*receive)["tid"], kTrackReceiveBase + 4);
  EXPECT_EQ((*receive)["args"]["worker"], "phone \"a\"");
  EXPECT_EQ((*step)["ts"], 50);  // 5'001'050 - 5 s - 1000
  EXPECT_EQ((*forward)["ts"], 60);
  EXPECT_EQ((*forward)["args"]["layer"], "conv1");
  EXPECT_EQ((*forward)["args"]["step"], 0);
  EXPECT_EQ((*forward)["cat"], "compute");
  EXPECT_EQ((*receive)["cat"], "wire");
  EXPECT_EQ((*local)["args"]["local_step"], 2);
  EXPECT_EQ((*local)["args"]["step"], 3);
  bool replaced = false;  // the layer name that was not UTF-8
  for (const json& e : events)
    if (e["ph"] == "X" && e["pid"] == 6 &&
        e["name"].get<std::string>().rfind("backward fc", 0) == 0)
      replaced = true;
  EXPECT_TRUE(replaced);
}

TEST(ChromeTrace, AnEmptyTraceIsStillAValidFile) {
  const json trace = json::parse(ChromeTraceJson({}));
  EXPECT_TRUE(trace["traceEvents"].empty());
  EXPECT_EQ(trace["displayTimeUnit"], "ms");
}

TEST(ChromeTrace, WritesTheFileWhole) {
  const std::filesystem::path dir = test_support::FreshTempDir("chrome-trace");
  const std::string path = (dir / "t.json").string();
  WriteChromeTrace(path, TwoDevices());
  const json trace = json::parse(ReadFile(path));
  EXPECT_EQ(trace["traceEvents"].size(), 6u + 2 * 2 + 3);  // spans, names and orders, threads
  EXPECT_THROW(WriteChromeTrace((dir / "missing" / "t.json").string(), TwoDevices()),
               std::runtime_error);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace mt::trace
