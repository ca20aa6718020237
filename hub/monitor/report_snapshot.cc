#include "hub/monitor/report_snapshot.h"

#include <limits>
#include <stdexcept>
#include <string>

namespace mt {
namespace {

template <class T>
std::optional<T> Optional(const ReportJson& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return it->get<T>();
}

// The report writes -1 for "none" where /api/status writes null.
std::optional<double> NonNegative(const ReportJson& j, const char* key) {
  const std::optional<double> v = Optional<double>(j, key);
  return v && *v >= 0 ? v : std::nullopt;
}

RunInfo RunFromReport(const ReportJson& r) {
  RunInfo run;
  run.model = r.value("model", "");
  run.dataset = r.value("dataset", "");
  run.compression = r.value("compression", "");
  const auto sync = r.find("sync_every");
  run.sync_every_setting = sync != r.end() && sync->is_number_integer() ? sync->get<int>() : 0;
  run.parameters = r.value("parameters", int64_t{0});
  run.total_steps = r.value("total_steps", int64_t{0});
  run.total_epochs = r.value("total_epochs", int64_t{0});
  run.global_batch = r.value("global_batch", int64_t{0});
  run.workers_expected = r.value("workers_expected", 0);
  run.first_step = r.value("first_step", int64_t{0});
  run.partition = r.value("partition", "iid");
  if (r.contains("partition_histograms"))
    run.partition_histograms = r["partition_histograms"].get<std::vector<std::vector<uint32_t>>>();
  if (r.contains("class_names")) run.class_names = r["class_names"].get<std::vector<std::string>>();
  return run;
}

WorkerRow WorkerFromReport(const ReportJson& w) {
  WorkerRow row;
  row.id = w.value("id", 0);
  row.name = w.value("name", "");
  row.state = w.value("state", "gone");
  row.device = w.value("device", "");
  row.placement = w.value("placement", "");
  row.peer = w.value("peer", "");
  row.left_because = w.value("left_because", "");
  row.batch = w.value("batch", 0);
  row.max_batch = w.value("max_batch", 0);
  row.ms_per_sample = w.value("ms_per_sample", 0.0);
  row.overhead_ms = w.value("overhead_ms", 0.0);
  row.mean_compute_ms = w.value("mean_compute_ms", 0.0);
  row.steps = w.value("steps", int64_t{0});
  row.samples = w.value("samples", int64_t{0});
  row.steps_missed = w.value("steps_missed", int64_t{0});
  row.resyncs = w.value("resyncs", int64_t{0});
  row.digests_checked = w.value("digests_checked", int64_t{0});
  row.clipped_segments = w.value("clipped_segments", int64_t{0});
  row.alignment = w.value("alignment", 0.0);
  row.bytes_in = w.value("bytes_in", int64_t{0});
  row.bytes_out = w.value("bytes_out", int64_t{0});
  row.battery_percent = Optional<double>(w, "battery_percent");
  row.temperature_c = Optional<double>(w, "temperature_c");
  row.charging = Optional<bool>(w, "charging");
  row.unmetered = Optional<bool>(w, "unmetered");
  row.left_out_events = w.value("left_out_events", int64_t{0});
  row.back_events = w.value("back_events", int64_t{0});
  return row;
}

void HistoryFromReport(const ReportJson& history, StatusSnapshot& s) {
  s.history_stride = history.value("stride", int64_t{1});
  for (const ReportJson& p : history.value("points", ReportJson::array())) {
    SeriesPoint point;
    point.step = p.value("step", int64_t{0});
    point.seconds = p.value("seconds", 0.0);
    point.loss = p.value("loss", 0.0);
    point.samples_per_second = p.value("samples_per_second", 0.0);
    point.step_ms = p.value("step_ms", 0.0);
    point.bytes_per_step = p.value("bytes_per_step", 0.0);
    s.history.push_back(point);
  }
}

}  // namespace

StatusSnapshot SnapshotFromReport(const ReportJson& report) {
  if (!report.is_object() || report.value("mode", "") != "hub")
    throw std::invalid_argument("not a hub's --report (its \"mode\" is not \"hub\")");
  try {
    StatusSnapshot s;
    s.run = RunFromReport(report);
    s.state = "finished";
    s.stop_reason = report.value("stop_reason", "");
    s.train_seconds = report.value("train_seconds", 0.0);
    s.step = report.value("steps", int64_t{0});
    s.samples = report.value("samples", int64_t{0});
    const ReportJson epochs = report.value("epochs", ReportJson::array());
    s.epoch = epochs.empty() ? 0 : epochs.back().value("epoch", int64_t{0});
    s.loss = NonNegative(report, "last_step_loss");
    s.samples_per_second = report.value("samples_per_second", 0.0);
    s.samples_per_second_over = "run";
    s.samples_per_second_span_seconds = s.train_seconds;
    // A report before the *_in_use names has only final_*.
    s.sync_every = report.value("sync_every_in_use", report.value("final_sync_every", 1));
    s.compression =
        report.value("compression_in_use", report.value("final_compression", std::string("none")));
    s.gradient_bytes_in = report.value("gradient_bytes_in", int64_t{0});
    s.result_bytes_out = report.value("result_bytes_out", int64_t{0});
    s.bytes_per_step = report.value("gradient_bytes_per_step", 0.0);
    s.test_accuracy = NonNegative(report, "test_accuracy");
    s.test_loss = NonNegative(report, "test_loss");
    if (const auto dp = report.find("differential_privacy");
        dp != report.end() && dp->is_object()) {
      PrivacyStatus p;
      p.clip = dp->value("clip", 0.0);
      p.noise_multiplier = dp->value("noise_multiplier", 0.0);
      p.delta = dp->value("delta", 0.0);
      const auto target = dp->find("target_epsilon");
      p.target_epsilon = target != dp->end() && target->is_number() ? target->get<double>() : 0;
      p.noise_added_by = dp->value("noise_added_by", "");
      p.rounds = dp->value("rounds", int64_t{0});
      const auto spent = dp->find("epsilon");  // null: no noise, no bound
      p.epsilon = spent != dp->end() && spent->is_number()
                      ? spent->get<double>()
                      : std::numeric_limits<double>::infinity();
      s.privacy = p;
    }
    HistoryFromReport(report.value("history", ReportJson::object()), s);
    for (const ReportJson& e : report.value("eval_history", ReportJson::array()))
      s.evaluations.push_back({e.value("step", int64_t{0}), e.value("seconds", 0.0),
                               e.value("samples", int64_t{0}), e.value("test_accuracy", 0.0),
                               e.value("test_loss", 0.0)});
    for (const ReportJson& c : report.value("sync_changes", ReportJson::array()))
      s.sync_changes.push_back({c.value("step", int64_t{0}), c.value("to", 1)});
    for (const ReportJson& w : report.value("workers", ReportJson::array()))
      s.workers.push_back(WorkerFromReport(w));
    s.joins_without_stream = report.value("joins_without_stream", int64_t{0});
    return s;
  } catch (const ReportJson::exception& e) {
    throw std::invalid_argument(std::string("a hub's --report, but not as written: ") + e.what());
  }
}

}  // namespace mt
