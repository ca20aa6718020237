// A worker's spans (worker/worker_trace.h): a traced LeNet-5 step records
// every layer's forward and backward, the loss and the optimizer; what the
// hub asked for leaves in batches, capped, with the stamps of the plan it
// answers; and the own --trace file names the layers.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <numeric>
#include <string>

#include "core/model/model_spec.h"
#include "core/util/atomic_file.h"
#include "proto/wire.h"
#include "tests/support/files.h"
#include "tests/support/idx_writer.h"
#include "wire/trace_wire.h"
#include "worker/compute_devices.h"
#include "worker/local_trainer.h"
#include "worker/worker_trace.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using trace::SpanKind;

std::vector<trace::Span> Decoded(const proto::TraceSpans& batch, int64_t step) {
  std::vector<trace::Span> out;
  trace::ForEachSpan(batch, step, [&](const trace::Span& s) { out.push_back(s); });
  return out;
}

TEST(WorkerTrace, ATracedStepRecordsEveryLayerTheLossAndTheOptimizer) {
  const fs::path dir = test_support::FreshTempDir("worker-trace-step");
  test_support::WriteIdxDataset(dir.string(), 64, 16, 3);
  ComputeDevices devices(DeviceChoice::kCpu, 1);
  TrainerSpec spec;
  spec.model = LoadModelSpec("lenet5");
  spec.dataset = dir.string();
  spec.capacity = 16;
  LocalTrainer trainer(devices, spec);
  WorkerTrace timeline((dir / "w.json").string(), "w");
  timeline.SetSending(true);
  timeline.NameLayers(trainer.model());
  trainer.set_trace(&timeline);
  std::vector<uint32_t> indices(16);
  std::iota(indices.begin(), indices.end(), 0u);
  timeline.SetStep(7);
  trainer.ComputeGradients(indices.data(), 16, 1);
  trainer.ApplyGradients();
  proto::TraceSpans batch;
  timeline.TakeBatch(7, &batch);
  ASSERT_EQ(trace::CheckSpans(batch, wire::kMaxTraceSpans), "");
  std::map<SpanKind, int> count;
  for (const trace::Span& s : Decoded(batch, 7)) {
    ++count[s.kind];
    EXPECT_EQ(s.step, 7);
    EXPECT_EQ(s.track, trace::kTrackCompute);
  }
  const int layers = static_cast<int>(trainer.model().layers().size());
  EXPECT_EQ(count[SpanKind::kForward], layers);
  EXPECT_EQ(count[SpanKind::kBackward], layers);  // everything trains
  EXPECT_EQ(count[SpanKind::kLoss], 1);
  EXPECT_EQ(count[SpanKind::kOptimizer], 1);
  // The own file has them too, the layers by name.
  timeline.Write();
  const json events = json::parse(ReadFile(dir / "w.json"))["traceEvents"];
  int named = 0;
  for (const json& e : events)
    if (e["ph"] == "X" && e["name"] == "forward conv1") ++named;
  EXPECT_EQ(named, 1) << events.dump(1);
  fs::remove_all(dir);
}

TEST(WorkerTrace, BatchesCarryThePlansStampsAndAreCapped) {
  WorkerTrace timeline("", "w");
  EXPECT_FALSE(timeline.active());
  timeline.SetSending(true);
  EXPECT_TRUE(timeline.active());
  timeline.SetStep(3);
  timeline.OnPlan(111, 222);
  const int over = 7;
  for (int i = 0; i < wire::kMaxTraceSpans + over; ++i)
    timeline.Add(trace::MakeSpan(SpanKind::kSend, 1000 + i, 1001 + i, 0));
  proto::TraceSpans batch;
  const int64_t before = trace::NowMicros();
  timeline.TakeBatch(3, &batch);
  EXPECT_EQ(batch.kind_size(), wire::kMaxTraceSpans);
  EXPECT_EQ(batch.dropped(), static_cast<uint32_t>(over));
  EXPECT_EQ(batch.plan_hub_time_us(), 111);
  EXPECT_EQ(batch.plan_received_us(), 222);
  EXPECT_GE(batch.sent_us(), before);
  // What was sent is forgotten, and so is the plan: a second gradient
  // answers no plan of its own.
  timeline.TakeBatch(4, &batch);
  EXPECT_EQ(batch.kind_size(), 0);
  EXPECT_EQ(batch.dropped(), 0u);
  EXPECT_EQ(batch.plan_hub_time_us(), 0);
  // A session whose hub did not ask sends nothing.
  timeline.SetSending(false);
  timeline.Add(trace::MakeSpan(SpanKind::kSend, 1, 2));
  timeline.TakeBatch(5, &batch);
  EXPECT_EQ(batch.kind_size(), 0);
}

TEST(WorkerTrace, RefusesAPathInAMissingDirectoryBeforeTraining) {
  const fs::path dir = test_support::FreshTempDir("worker-trace-missing");
  EXPECT_THROW(WorkerTrace((dir / "no" / "t.json").string(), "w"), std::runtime_error);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mt
