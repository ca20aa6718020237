// The hub's state for its live views (the dashboard, /metrics, /api/status),
// behind its own lock: the run thread feeds it each step and evaluation,
// the event chain (it is a HubEventSink, passing every event on) feeds it
// membership events, and the HTTP server's threads read copies of it. It
// owns the run's step history, which the --report shows as well.
//
// Lock order: the coordinator's lock may be held when an event arrives
// here, so nothing here ever calls into the coordinator.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/train/run_summary.h"
#include "core/train/step_history.h"
#include "hub/monitor/histogram.h"
#include "hub/monitor/status_snapshot.h"
#include "hub/report/hub_events.h"

namespace mt {

// One applied step (or local-SGD round), as the run thread saw it finish.
struct LiveStep {
  int64_t step = 0;    // steps done after it
  int64_t steps = 1;   // steps it covered
  int64_t epoch = 0;   // 1-based, that `step` is in
  double seconds = 0;  // since training began
  int64_t samples = 0;
  double loss_sum = 0;
  // Run totals so far (the step's own bytes are the difference).
  int64_t gradient_bytes_in = 0, result_bytes_out = 0;
  // From the first participant's whole gradient to the step's close: how
  // long the quickest waited for the slowest (or for the deadline).
  double barrier_wait_seconds = 0;
};

class LiveStatus final : public HubEventSink {
 public:
  static constexpr size_t kHistoryPoints = 500;
  static constexpr size_t kMaxEvents = 200;
  static constexpr size_t kMaxEvaluations = 1000;
  static constexpr size_t kMaxSyncChanges = 1000;
  static constexpr size_t kMaxDetail = 240;  // characters of an event's detail kept

  // `next` (may be null) gets every event after this has seen it.
  explicit LiveStatus(HubEventSink* next);

  void SetRun(RunInfo run);
  // The run thread, after each applied step. True when it closed a point
  // of the step history: the caller may then give the point's batches.
  bool OnStep(const LiveStep& s);
  void SetClosedPointBatches(std::vector<std::pair<std::string, int>> batches);
  void OnEvaluation(const EvalPoint& p);
  void OnEvent(const HubEvent& e) override;

  // The step history for the --report.
  ReportJson HistoryJson() const;
  // Fills everything in `out` but the workers' rows, whose left-out and
  // rejoin counts it adds (rows matched by id).
  void Fill(StatusSnapshot& out) const;

 private:
  using Clock = std::chrono::steady_clock;
  // A reading every kRateEvery seconds, the last kRateReadings of them:
  // the recent rate, ETA and bytes per step are over that window.
  static constexpr double kRateEvery = 0.5;
  static constexpr size_t kRateReadings = 20;
  struct Reading {
    double seconds = 0;
    int64_t step = 0, samples = 0, bytes = 0;
  };
  void Record(const HubEvent& e);
  // Under the lock: the oldest reading of the window and the newest.
  const Reading& OldestReading() const;

  HubEventSink* next_;
  const Clock::time_point started_ = Clock::now();
  mutable std::mutex mu_;
  RunInfo run_;
  std::string state_ = "waiting", stop_reason_;
  LiveStep last_;
  bool any_step_ = false;
  int64_t samples_ = 0;
  FixedHistogram step_seconds_{FixedHistogram::SecondsBuckets()};
  FixedHistogram barrier_wait_{FixedHistogram::SecondsBuckets()};
  StepHistory history_{kHistoryPoints};
  StepPoint* closed_point_ = nullptr;  // what OnStep closed, until its batches come
  std::array<Reading, kRateReadings> readings_{};
  size_t readings_count_ = 0, readings_next_ = 0;
  Reading latest_;
  std::vector<EvalPoint> evaluations_;
  std::vector<SyncPoint> sync_changes_;
  std::deque<RecentEvent> events_;
  int64_t events_total_ = 0;
  struct WorkerCounts {
    int64_t left_out = 0, back = 0;
  };
  std::unordered_map<int, WorkerCounts> worker_counts_;
};

}  // namespace mt
