// The --report and /api/status write the run and its workers with one
// writer (hub/monitor/run_json.h): from the same snapshot they agree on
// every field they share, and neither lost a key it wrote before.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hub/hub_report.h"
#include "hub/membership/worker_slot.h"
#include "hub/monitor/live_status.h"
#include "hub/monitor/report_snapshot.h"
#include "hub/monitor/status_json.h"
#include "hub/monitor/status_source.h"
#include "hub/policy/batch_controller.h"

namespace mt {
namespace {

// A slot as the coordinator leaves it after some steps, every figure set
// to a value of its own so a field copied into the wrong key shows.
WorkerRow PhoneRow(int id, bool device_says, const BatchController& controller) {
  WorkerSlot s(id, {}, 0);
  s.name = "phone" + std::to_string(id);
  s.peer = "ipv4:10.0.0." + std::to_string(id);
  s.device = "Pixel 7";
  s.placement = "cpu,cpu,opencl";
  s.state = WorkerSlot::State::kActive;
  s.attached = true;
  s.max_batch = 96;
  s.last_batch = 40 + id;
  s.alignment = 0.75;
  s.left_because = "battery low";
  s.stats.steps = 10;
  s.stats.samples = 415;
  s.stats.compute_ms = 250;
  s.stats.steps_missed = 2;
  s.stats.resyncs = 1;
  s.stats.digests_checked = 9;
  s.stats.clipped_segments = 3;
  s.stats.bytes_in = 12345;
  s.stats.bytes_out = 67890;
  if (device_says) {
    s.device_status.set_battery_percent(55);
    s.device_status.set_charging(false);
    s.device_status.set_unmetered(true);
    s.device_status.set_temperature_c(38.5);
  }
  return WorkerRowOf(s, controller);
}

StatusSnapshot SnapshotOfARun() {
  LiveStatus live(nullptr);
  RunInfo run;
  run.model = "lenet5";
  run.dataset = "fashion-mnist";
  run.compression = "fp16";
  run.sync_every_setting = 8;
  run.parameters = 61706;
  run.total_steps = 100;
  run.global_batch = 64;
  run.workers_expected = 2;
  run.first_step = 20;
  live.SetRun(run);
  LiveStep step;
  step.step = 21;
  step.epoch = 1;
  step.seconds = 0.5;
  step.samples = 64;
  step.loss_sum = 32;
  live.OnStep(step);
  live.OnEvent({HubEvent::Kind::kWorkerLeftOut, 21, 1, "missed the deadline", "phone1"});
  BatchController controller(BatchPolicy::kBalanced);
  controller.Observe(1, 41, 120, 150);
  StatusSnapshot s;
  s.workers = {PhoneRow(1, true, controller), PhoneRow(2, false, controller)};
  s.joins_without_stream = 3;
  s.sync_every = 4;
  s.compression = "topk";
  live.Fill(s);
  return s;
}

ReportJson ReportOf(const StatusSnapshot& s) {
  RunSummary r;
  r.mode = "hub";
  ReportRun(s, r);
  ReportWorkers(s, r.details);
  return r.ToJson();
}

TEST(ReportAndStatus, AgreeOnTheRunAndEveryWorkerFromTheSameSnapshot) {
  const StatusSnapshot s = SnapshotOfARun();
  const ReportJson status = StatusJson(s);
  const ReportJson report = ReportOf(s);
  ASSERT_GE(status["run"].size(), 9u);
  for (const auto& [key, value] : status["run"].items()) {
    ASSERT_TRUE(report.contains(key)) << key;
    EXPECT_EQ(report[key], value) << key;
  }
  EXPECT_EQ(report["sync_every"], 8);
  // The H and the encoding in use: one figure, one name in both.
  EXPECT_EQ(report["sync_every_in_use"], status["sync_every_in_use"]);
  EXPECT_EQ(report["sync_every_in_use"], 4);
  EXPECT_EQ(report["compression_in_use"], status["compression_in_use"]);
  // The names each wrote before, kept for the scripts that read them.
  EXPECT_EQ(report["final_sync_every"], 4);
  EXPECT_EQ(status["sync_every"], 4);
  EXPECT_EQ(report["final_compression"], report["compression_in_use"]);
  EXPECT_EQ(status["compression"], status["compression_in_use"]);
  // A report view reads its own report back, new names or old.
  EXPECT_EQ(SnapshotFromReport(report).sync_every, 4);
  ReportJson old = report;
  old.erase("sync_every_in_use");
  old.erase("compression_in_use");
  EXPECT_EQ(SnapshotFromReport(old).sync_every, 4);
  EXPECT_EQ(SnapshotFromReport(old).compression, "topk");
  EXPECT_EQ(report["joins_without_stream"], status["joins_without_stream"]);
  ASSERT_EQ(status["workers"].size(), 2u);
  EXPECT_EQ(report["workers"], status["workers"]);
}

TEST(ReportAndStatus, KeepEveryKeyEitherWroteBeforeOneWriter) {
  const StatusSnapshot s = SnapshotOfARun();
  const ReportJson status = StatusJson(s);
  const ReportJson report = ReportOf(s);
  // What the report wrote of a worker, then what /api/status did.
  const std::vector<std::string> worker_keys = {
      "id",           "name",          "device",          "placement",
      "samples",      "steps",         "mean_batch",      "mean_compute_ms",
      "steps_missed", "resyncs",       "digests_checked", "clipped_segments",
      "alignment",    "max_batch",     "last_batch",      "ms_per_sample",
      "overhead_ms",  "left_because",  "battery_percent", "charging",
      "unmetered",    "temperature_c", "state",           "peer",
      "batch",        "bytes_in",      "bytes_out",       "left_out_events",
      "back_events"};
  for (const std::string& key : worker_keys) {
    EXPECT_TRUE(report["workers"][0].contains(key)) << key;
    EXPECT_TRUE(status["workers"][0].contains(key)) << key;
  }
  for (const char* key : {"model", "dataset", "parameters", "global_batch", "compression",
                          "sync_every", "final_sync_every", "joins_without_stream"})
    EXPECT_TRUE(report.contains(key)) << key;
  for (const char* key : {"model", "dataset", "parameters", "total_steps", "global_batch",
                          "workers_expected", "first_step", "compression", "sync_every"})
    EXPECT_TRUE(status["run"].contains(key)) << key;
}

TEST(ReportAndStatus, AWorkersFiguresComeFromItsSlotAndUnknownOnesAreNull) {
  const StatusSnapshot s = SnapshotOfARun();
  const ReportJson report = ReportOf(s);
  const ReportJson& said = report["workers"][0];
  EXPECT_EQ(said["name"], "phone1");
  EXPECT_EQ(said["state"], "active");
  EXPECT_EQ(said["peer"], "ipv4:10.0.0.1");
  EXPECT_EQ(said["batch"], 41);
  EXPECT_EQ(said["last_batch"], 41);
  EXPECT_DOUBLE_EQ(said["mean_batch"].get<double>(), 41.5);
  EXPECT_DOUBLE_EQ(said["mean_compute_ms"].get<double>(), 25);
  EXPECT_EQ(said["digests_checked"], 9);
  EXPECT_EQ(said["clipped_segments"], 3);
  EXPECT_DOUBLE_EQ(said["alignment"].get<double>(), 0.75);
  EXPECT_EQ(said["bytes_in"], 12345);
  EXPECT_EQ(said["bytes_out"], 67890);
  EXPECT_EQ(said["left_out_events"], 1);
  EXPECT_EQ(said["battery_percent"], 55.0);
  EXPECT_EQ(said["charging"], false);
  EXPECT_EQ(said["unmetered"], true);
  EXPECT_DOUBLE_EQ(said["temperature_c"].get<double>(), 38.5);
  // Measured by the batch controller: its estimates, not the unmeasured -1.
  EXPECT_GT(said["ms_per_sample"].get<double>(), 0);
  EXPECT_GE(said["overhead_ms"].get<double>(), 0);
  const ReportJson& silent = report["workers"][1];
  EXPECT_EQ(silent["ms_per_sample"], -1.0);
  for (const char* key : {"battery_percent", "charging", "unmetered", "temperature_c"})
    EXPECT_TRUE(silent[key].is_null()) << key;
}

}  // namespace
}  // namespace mt
