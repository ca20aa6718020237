// What the dashboard and /api/status are built from, without sockets:
// LiveStatus fed as the hub feeds it (steps, evaluations, events), the
// JSON rendered from its snapshot, and who may read them (the token).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hub/monitor/access_token.h"
#include "hub/monitor/live_status.h"
#include "hub/monitor/status_json.h"

namespace mt {
namespace {

class RecordingSink : public HubEventSink {
 public:
  void OnEvent(const HubEvent& e) override { kinds.push_back(e.kind); }
  std::vector<HubEvent::Kind> kinds;
};

LiveStep StepAt(int64_t step, double seconds, int64_t bytes_total) {
  LiveStep s;
  s.step = step;
  s.epoch = 1;
  s.seconds = seconds;
  s.samples = 100;
  s.loss_sum = 50;  // mean loss 0.5
  s.gradient_bytes_in = bytes_total / 2;
  s.result_bytes_out = bytes_total / 2;
  s.barrier_wait_seconds = 0.002;
  return s;
}

RunInfo Run100Steps() {
  RunInfo run;
  run.model = "lenet5";
  run.dataset = "fashion-mnist";
  run.total_steps = 100;
  run.total_epochs = 2;
  run.workers_expected = 2;
  run.sync_every_setting = 0;  // auto
  return run;
}

TEST(LiveStatus, StepsMakeTheRunsFiguresRateAndHistory) {
  LiveStatus live(nullptr);
  live.SetRun(Run100Steps());
  // 10 steps, one every 0.1 s, 1000 bytes each.
  for (int i = 1; i <= 10; ++i) live.OnStep(StepAt(i, 0.1 * i, 1000 * i));
  StatusSnapshot s;
  live.Fill(s);
  EXPECT_EQ(s.state, "training");
  EXPECT_EQ(s.step, 10);
  EXPECT_EQ(s.samples, 1000);
  ASSERT_TRUE(s.loss.has_value());
  EXPECT_DOUBLE_EQ(*s.loss, 0.5);
  // 100 samples per 0.1 s; 90 steps left at 0.1 s each.
  EXPECT_NEAR(s.samples_per_second, 1000, 1e-6);
  // Over the recent readings, and said so (a report's figure is the run's mean).
  EXPECT_EQ(s.samples_per_second_over, "recent");
  EXPECT_NEAR(s.samples_per_second_span_seconds, 0.9, 1e-6);
  EXPECT_EQ(StatusJson(s)["samples_per_second_over"], "recent");
  EXPECT_NEAR(s.eta_seconds, 9, 1e-6);
  EXPECT_NEAR(s.bytes_per_step, 1000, 1e-6);
  EXPECT_EQ(s.step_seconds.count(), 10);
  EXPECT_EQ(s.barrier_wait_seconds.count(), 10);
  ASSERT_EQ(s.history.size(), 10u);
  EXPECT_EQ(s.history.back().step, 10);
  EXPECT_NEAR(s.history.back().step_ms, 100, 1e-6);
  EXPECT_NEAR(s.history.back().bytes_per_step, 1000, 1e-6);
  // The report's history is the same series.
  EXPECT_EQ(live.HistoryJson()["points"].size(), 10u);
}

TEST(LiveStatus, TheHistoryStaysBoundedAndKeepsTheBatchesGivenForAClosedPoint) {
  LiveStatus live(nullptr);
  for (int i = 1; i <= 3000; ++i) {
    if (live.OnStep(StepAt(i, 0.01 * i, 0))) live.SetClosedPointBatches({{"a", 30}, {"b", 34}});
  }
  StatusSnapshot s;
  live.Fill(s);
  EXPECT_LE(s.history.size(), LiveStatus::kHistoryPoints);
  EXPECT_GT(s.history_stride, 1);
  // It still reaches the latest steps.
  EXPECT_GT(s.history.back().step, 3000 - 2 * s.history_stride);
  const ReportJson report = live.HistoryJson();
  EXPECT_EQ(report["points"].back()["batches"]["b"], 34);
}

TEST(LiveStatus, CountsLeftOutAndRejoinsPerWorkerAndPassesEveryEventOn) {
  RecordingSink next;
  LiveStatus live(&next);
  live.OnEvent({HubEvent::Kind::kStepPublished, 0, -1, {}, {}});
  live.OnEvent({HubEvent::Kind::kWorkerLeftOut, 3, 1, "missed the deadline", "slow"});
  live.OnEvent({HubEvent::Kind::kWorkerBack, 5, 1, {}, "slow"});
  live.OnEvent({HubEvent::Kind::kWorkerLeftOut, 7, 1, "missed the deadline", "slow"});
  live.OnEvent({HubEvent::Kind::kStepDone, 8, -1, {}, {}});
  live.OnEvent({HubEvent::Kind::kSyncPeriodChanged, 9, -1, "1->8", {}});
  EXPECT_EQ(next.kinds.size(), 6u);
  StatusSnapshot s;
  WorkerRow slow, fast;
  slow.id = 1;
  fast.id = 0;
  s.workers = {fast, slow};
  live.Fill(s);
  EXPECT_EQ(s.state, "training");
  EXPECT_EQ(s.workers[1].left_out_events, 2);
  EXPECT_EQ(s.workers[1].back_events, 1);
  EXPECT_EQ(s.workers[0].left_out_events, 0);
  ASSERT_EQ(s.sync_changes.size(), 1u);
  EXPECT_EQ(s.sync_changes[0].step, 9);
  EXPECT_EQ(s.sync_changes[0].sync_every, 8);
  // Per-step events are not "recent events": they would push out the rest.
  ASSERT_EQ(s.events.size(), 4u);
  EXPECT_EQ(s.events[0].kind, "worker_left_out");
  EXPECT_EQ(s.events[0].worker_name, "slow");
  EXPECT_EQ(s.events_total, 4);
}

TEST(LiveStatus, KeepsTheLatestEventsOnlyAndEndsFinishedWithTheReason) {
  LiveStatus live(nullptr);
  const int n = static_cast<int>(LiveStatus::kMaxEvents) + 50;
  for (int i = 0; i < n; ++i)
    live.OnEvent({HubEvent::Kind::kWorkerJoined, i, i, std::string(1000, 'x'), "w"});
  live.OnEvent({HubEvent::Kind::kRunEnded, n, -1, "training complete", {}});
  StatusSnapshot s;
  live.Fill(s);
  ASSERT_EQ(s.events.size(), LiveStatus::kMaxEvents);
  EXPECT_EQ(s.events.back().kind, "run_ended");
  EXPECT_EQ(s.events.front().step, n + 1 - static_cast<int>(LiveStatus::kMaxEvents));
  EXPECT_LE(s.events.front().detail.size(), LiveStatus::kMaxDetail + 3);
  EXPECT_EQ(s.events_total, n + 1);
  EXPECT_EQ(s.state, "finished");
  EXPECT_EQ(s.stop_reason, "training complete");
}

TEST(StatusJson, HoldsTheRunTheWorkersAndTheSeries) {
  LiveStatus live(nullptr);
  live.SetRun(Run100Steps());
  live.OnStep(StepAt(1, 0.5, 2000));
  EvalPoint eval;
  eval.step = 1;
  eval.test_accuracy = 0.25;
  eval.test_loss = 2;
  live.OnEvaluation(eval);
  StatusSnapshot s;
  WorkerRow w;
  w.id = 4;
  w.name = "pixel";
  w.state = "active";
  w.batch = 32;
  w.battery_percent = 80;
  s.workers = {w};
  live.Fill(s);
  const ReportJson j = StatusJson(s);
  EXPECT_EQ(j["run"]["model"], "lenet5");
  EXPECT_EQ(j["run"]["total_steps"], 100);
  EXPECT_EQ(j["run"]["total_epochs"], 2);
  EXPECT_EQ(j["state"], "training");
  EXPECT_EQ(j["step"], 1);
  EXPECT_DOUBLE_EQ(j["loss"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(j["test_accuracy"].get<double>(), 0.25);
  EXPECT_EQ(j["workers_total"], 1);
  EXPECT_EQ(j["workers_by_state"]["active"], 1);
  EXPECT_EQ(j["workers_by_state"]["late"], 0);
  ASSERT_EQ(j["workers"].size(), 1u);
  EXPECT_EQ(j["workers"][0]["name"], "pixel");
  EXPECT_EQ(j["workers"][0]["battery_percent"], 80.0);
  EXPECT_TRUE(j["workers"][0]["charging"].is_null());  // not reported: unknown, not false
  EXPECT_EQ(j["history"]["points"].size(), 1u);
  EXPECT_EQ(j["evaluations"][0]["test_accuracy"], 0.25);
  EXPECT_TRUE(j["sync_changes"].is_array());
  EXPECT_TRUE(j["events"]["recent"].is_array());
  EXPECT_EQ(j["histograms"]["step_seconds"]["count"], 1);
}

TEST(StatusJson, UnknownFiguresAreNullBeforeTheFirstStep) {
  LiveStatus live(nullptr);
  StatusSnapshot s;
  live.Fill(s);
  const ReportJson j = StatusJson(s);
  EXPECT_EQ(j["state"], "waiting");
  EXPECT_TRUE(j["loss"].is_null());
  EXPECT_TRUE(j["test_accuracy"].is_null());
  EXPECT_EQ(j["step"], 0);
}

TEST(LiveStatus, AResumedRunShowsItsCheckpointsStepBeforeItsFirstStepHere) {
  LiveStatus live(nullptr);
  RunInfo run = Run100Steps();
  run.first_step = 60;
  live.SetRun(run);
  StatusSnapshot before;
  live.Fill(before);
  EXPECT_EQ(before.step, 60);
  live.OnStep(StepAt(61, 0.1, 0));
  StatusSnapshot after;
  live.Fill(after);
  EXPECT_EQ(after.step, 61);
}

TEST(DashboardAccess, WithoutATokenAnyoneReads) {
  EXPECT_TRUE(RequestAuthorized("", "", ""));
  EXPECT_TRUE(RequestAuthorized("", "Bearer whatever", ""));
}

TEST(DashboardAccess, WithATokenABearerHeaderOrTheQueryMustCarryIt) {
  const std::string token = "s3cret";
  EXPECT_TRUE(RequestAuthorized(token, "Bearer s3cret", ""));
  EXPECT_TRUE(RequestAuthorized(token, "bearer  s3cret ", ""));  // the scheme in any case
  EXPECT_TRUE(RequestAuthorized(token, "", "s3cret"));
  EXPECT_FALSE(RequestAuthorized(token, "", ""));
  EXPECT_FALSE(RequestAuthorized(token, "Bearer s3cre", ""));
  EXPECT_FALSE(RequestAuthorized(token, "Bearer s3cret2", ""));
  EXPECT_FALSE(RequestAuthorized(token, "Basic s3cret", ""));
  EXPECT_FALSE(RequestAuthorized(token, "s3cret", ""));
  EXPECT_FALSE(RequestAuthorized(token, "Bearer ", "wrong"));
}

}  // namespace
}  // namespace mt
