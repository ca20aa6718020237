// What the hub's live views show (/api/status, /metrics, the dashboard):
// plain data, copied out of the hub under its locks, so the renderers
// (status_json.h, prometheus_text.h) are pure functions over it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/train/run_summary.h"
#include "hub/membership/worker_row.h"
#include "hub/monitor/histogram.h"

namespace mt {

// A point of the step history (core/train/step_history.h) without the
// per-worker batches, which the live views do not draw.
struct SeriesPoint {
  int64_t step = 0;
  double seconds = 0;  // since training began
  double loss = 0;
  double samples_per_second = 0;
  double step_ms = 0;
  double bytes_per_step = 0;
};

struct SyncPoint {
  int64_t step = 0;
  int sync_every = 1;  // local steps per round from this step on
};

struct RecentEvent {
  double seconds = 0;  // since the hub started
  int64_t step = 0;
  std::string kind;  // as in --events (hub_events.h's EventName)
  int worker = -1;
  std::string worker_name, detail;
};

// Differential privacy (mthub --dp-clip): the settings and what the run
// has spent so far.
struct PrivacyStatus {
  double clip = 0, noise_multiplier = 0, delta = 0;
  double target_epsilon = 0;   // --dp-epsilon; 0: the noise was given
  std::string noise_added_by;  // "hub" (central DP) or "workers"
  int64_t rounds = 0;          // released so far
  double epsilon = 0;          // spent so far, at delta
};

// The run as configured.
struct RunInfo {
  std::string model, dataset, compression;
  int sync_every_setting = 0;  // --sync-every: the fixed H, 0 for auto
  int64_t parameters = 0, total_steps = 0, global_batch = 0;
  int64_t total_epochs = 0;  // epochs the run's steps begin (a partial last one counts)
  int workers_expected = 0;
  int64_t first_step = 0;  // steps done before this process trained (resumed runs)
  // --partition and each share's samples per class (empty: iid), and the
  // dataset's class names when it has them.
  std::string partition = "iid";
  std::vector<std::vector<uint32_t>> partition_histograms;
  std::vector<std::string> class_names;
};

struct StatusSnapshot {
  RunInfo run;
  // Where it stands.
  std::string state = "waiting";  // waiting | training | finished
  std::string stop_reason;        // once finished
  double uptime_seconds = 0;      // since the hub started
  double train_seconds = 0;       // since training began, at the last step
  int64_t step = 0, epoch = 0, samples = 0;
  std::optional<double> loss;  // of the last step
  double samples_per_second = 0, eta_seconds = 0;
  // What samples_per_second averages over: "recent" (live: the last
  // samples_per_second_span_seconds) or "run" (a report: the whole run,
  // as the report's own samples_per_second).
  std::string samples_per_second_over = "recent";
  double samples_per_second_span_seconds = 0;
  int sync_every = 1;                // local steps per round now
  std::string compression = "none";  // how rounds are encoded now (run.compression: the setting)
  int64_t gradient_bytes_in = 0, result_bytes_out = 0;
  double bytes_per_step = 0;                       // recent
  std::optional<double> test_accuracy, test_loss;  // the last evaluation
  std::optional<PrivacyStatus> privacy;            // --dp-clip; none: off

  FixedHistogram step_seconds{FixedHistogram::SecondsBuckets()};
  FixedHistogram barrier_wait_seconds{FixedHistogram::SecondsBuckets()};

  std::vector<SeriesPoint> history;
  int64_t history_stride = 1;  // steps per point
  std::vector<EvalPoint> evaluations;
  std::vector<SyncPoint> sync_changes;
  std::vector<RecentEvent> events;  // oldest first
  // Events kept (LiveStatus::OnEvent says which), of which `events` are the latest.
  int64_t events_total = 0;

  std::vector<WorkerRow> workers;    // by id; joins that never opened a stream left out
  int64_t joins_without_stream = 0;  // all told, of which
  int64_t joins_pending = 0;         // still may open one (their slots are held)
  // Workers gone for good, all told; the most recent of them are in
  // `workers` (hub/membership/departed_workers.h), the others only counted here.
  struct Departed {
    int64_t workers = 0, said_leave = 0, unlisted = 0, samples = 0;
  } departed;
};

}  // namespace mt
