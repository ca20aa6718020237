// The hub's merged timeline (hub/report/hub_trace.h): a worker's spans, sent on its
// own clock, land on the hub's, shifted by the offset its round trips
// show, in a row named after it; the hub's receive spans get a row per
// worker; what is malformed is refused; and the file is written even when
// the run ends without Write.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "core/util/atomic_file.h"
#include "hub/report/hub_trace.h"
#include "proto/wire.h"
#include "tests/support/files.h"
#include "wire/trace_wire.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using trace::MakeSpan;
using trace::SpanKind;

constexpr int64_t kWorkerAhead = 3'000'000;  // the worker's clock, against the hub's

// Worker 0's last chunk of step 5: the plan left the hub at 10 s, took
// 200 us each way, and the worker computed for 1 ms in between.
proto::GradientChunk LastChunk(int64_t step = 5) {
  std::vector<trace::Span> spans = {
      MakeSpan(SpanKind::kForward, 10'000'300 + kWorkerAhead, 10'000'400 + kWorkerAhead, 0),
      MakeSpan(SpanKind::kBackward, 10'000'700 + kWorkerAhead, 10'000'900 + kWorkerAhead, 1),
  };
  for (auto& s : spans) s.track = trace::kTrackCompute;
  proto::GradientChunk chunk;
  chunk.set_step(step);
  chunk.set_last(true);
  trace::EncodeSpans(
      spans.data(), spans.size(), 4,
      trace::BatchStamps{10'000'000, 10'000'200 + kWorkerAhead, 10'001'200 + kWorkerAhead}, step,
      chunk.mutable_trace());
  return chunk;
}

const json* Find(const json& events, const std::string& ph, const std::string& name, int pid = -1) {
  for (const json& e : events)
    if (e.value("ph", "") == ph && e.value("name", "") == name &&
        (pid < 0 || e.value("pid", -1) == pid))
      return &e;
  return nullptr;
}

int PidOf(const json& events, const std::string& process) {
  for (const json& e : events)
    if (e.value("name", "") == "process_name" && e["args"].value("name", "") == process)
      return e.value("pid", -1);
  return -1;
}

TEST(HubTrace, WorkerSpansLandOnTheHubsClockInARowNamedAfterTheWorker) {
  const fs::path dir = test_support::FreshTempDir("hub-trace");
  const std::string path = (dir / "trace.json").string();
  {
    HubTrace t(path, {"conv1", "relu1"});
    t.hub()->Add(MakeSpan(SpanKind::kBroadcast, 10'000'000, 10'000'050, -1, 5));
    t.OnJoin(0, "w0");
    t.OnJoin(1, "w1");  // joins, never sends a span
    proto::GradientChunk first;
    first.set_step(5);
    t.OnChunk(0, first, /*first=*/true, 10'001'000);
    const proto::GradientChunk last = LastChunk();
    EXPECT_EQ(HubTrace::Check(last), "");
    t.OnChunk(0, last, /*first=*/false, 10'001'400);
    t.Write();
  }
  const json trace = json::parse(ReadFile(path));
  const json& events = trace["traceEvents"];
  const int hub = PidOf(events, "mthub"), w0 = PidOf(events, "w0");
  ASSERT_GT(hub, 0) << events.dump(1);
  ASSERT_GT(w0, 0) << events.dump(1);
  EXPECT_NE(hub, w0);
  EXPECT_EQ(PidOf(events, "w1"), -1);  // no spans, no row
  const json* forward = Find(events, "X", "forward conv1", w0);
  const json* backward = Find(events, "X", "backward relu1", w0);
  const json* receive = Find(events, "X", "receive w0", hub);
  ASSERT_TRUE(forward && backward && receive) << events.dump(1);
  // Symmetric legs: the offset is exact, and the worker's spans sit where
  // they happened on the hub's clock (the broadcast at 10 s is time 0).
  EXPECT_EQ((*forward)["ts"], 300);
  EXPECT_EQ((*forward)["dur"], 100);
  EXPECT_EQ((*backward)["ts"], 700);
  EXPECT_EQ((*forward)["args"]["step"], 5);
  EXPECT_EQ((*receive)["ts"], 1000);
  EXPECT_EQ((*receive)["dur"], 400);
  EXPECT_EQ((*receive)["tid"], trace::kTrackReceiveBase + 0);
  const json& w0_info = trace["otherData"]["processes"]["w0"];
  EXPECT_EQ(w0_info["clock_offset_us"], kWorkerAhead);
  EXPECT_EQ(w0_info["clock_round_trip_us"], 400);
  EXPECT_EQ(w0_info["clock_samples"], 1);
  EXPECT_EQ(trace["otherData"]["dropped_spans"]["w0"], 4);  // counted by the worker
  EXPECT_NE(Find(events, "M", "thread_name", hub), nullptr);
  fs::remove_all(dir);
}

TEST(HubTrace, RefusesSpansItCannotTrust) {
  proto::GradientChunk plain;
  plain.set_last(true);
  EXPECT_EQ(HubTrace::Check(plain), "");  // no spans: nothing to check
  proto::GradientChunk early = LastChunk();
  early.set_last(false);
  EXPECT_NE(HubTrace::Check(early), "");  // spans come with the last chunk only
  proto::GradientChunk bad = LastChunk();
  bad.mutable_trace()->add_kind(0);
  EXPECT_NE(HubTrace::Check(bad), "");
  proto::GradientChunk many = LastChunk();
  for (int i = 0; i < wire::kMaxTraceSpans; ++i) {
    many.mutable_trace()->add_kind(0);
    many.mutable_trace()->add_index(-1);
    many.mutable_trace()->add_begin_delta_us(0);
    many.mutable_trace()->add_duration_us(0);
    many.mutable_trace()->add_track(0);
    many.mutable_trace()->add_step_delta(0);
  }
  EXPECT_NE(HubTrace::Check(many), "");
}

TEST(HubTrace, ARunThatEndsWithoutWriteStillLeavesItsTrace) {
  const fs::path dir = test_support::FreshTempDir("hub-trace-unwritten");
  const std::string path = (dir / "trace.json").string();
  {
    HubTrace t(path, {});
    t.hub()->Add(MakeSpan(SpanKind::kEvaluation, 5, 10));
  }
  const json trace = json::parse(ReadFile(path));
  EXPECT_NE(Find(trace["traceEvents"], "X", "evaluation"), nullptr);
  EXPECT_THROW(HubTrace((dir / "missing" / "t.json").string(), {}), std::runtime_error);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mt
