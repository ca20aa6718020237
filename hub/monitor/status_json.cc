#include "hub/monitor/status_json.h"

#include <map>
#include <string>

#include "hub/monitor/run_json.h"

namespace mt {
namespace {

ReportJson HistogramJson(const FixedHistogram& h) {
  ReportJson buckets = ReportJson::array();
  const std::vector<int64_t> cumulative = h.Cumulative();
  for (size_t i = 0; i < cumulative.size(); ++i)
    buckets.push_back({{"le", h.bounds()[i]}, {"count", cumulative[i]}});
  return {{"buckets", std::move(buckets)}, {"count", h.count()}, {"sum", h.sum()}};
}

}  // namespace

ReportJson StatusJson(const StatusSnapshot& s) {
  ReportJson j;
  j["run"] = RunJson(s.run);
  j["state"] = s.state;
  j["stop_reason"] = s.stop_reason;
  j["uptime_seconds"] = s.uptime_seconds;
  j["train_seconds"] = s.train_seconds;
  j["step"] = s.step;
  j["epoch"] = s.epoch;
  j["samples"] = s.samples;
  j["loss"] = JsonOrNull(s.loss);
  j["samples_per_second"] = s.samples_per_second;
  j["samples_per_second_over"] = s.samples_per_second_over;
  j["samples_per_second_span_seconds"] = s.samples_per_second_span_seconds;
  j["eta_seconds"] = s.eta_seconds;
  // In use now (run.sync_every and run.compression are the settings, as at
  // the report's top level); the bare names as this wrote them before.
  j["sync_every_in_use"] = s.sync_every;
  j["compression_in_use"] = s.compression;
  j["sync_every"] = s.sync_every;
  j["compression"] = s.compression;
  j["gradient_bytes_in"] = s.gradient_bytes_in;
  j["result_bytes_out"] = s.result_bytes_out;
  j["bytes_per_step"] = s.bytes_per_step;
  j["test_accuracy"] = JsonOrNull(s.test_accuracy);
  j["test_loss"] = JsonOrNull(s.test_loss);
  j["privacy"] = s.privacy ? PrivacyJson(*s.privacy) : ReportJson();

  // Every state named, so a client need not know which exist.
  std::map<std::string, int> by_state{
      {"joined", 0}, {"waiting", 0}, {"active", 0}, {"late", 0}, {"gone", 0}};
  ReportJson workers = ReportJson::array();
  for (const WorkerRow& w : s.workers) {
    ++by_state[w.state];
    workers.push_back(WorkerJson(w));
  }
  by_state["gone"] += static_cast<int>(s.departed.unlisted);
  j["workers_total"] = static_cast<int64_t>(s.workers.size()) + s.departed.unlisted;
  j["workers_by_state"] = by_state;
  j["joins_without_stream"] = s.joins_without_stream;
  j["joins_pending"] = s.joins_pending;
  j["workers_departed"] = s.departed.workers;
  j["workers"] = std::move(workers);

  ReportJson points = ReportJson::array();
  for (const SeriesPoint& p : s.history)
    points.push_back({{"step", p.step},
                      {"seconds", p.seconds},
                      {"loss", p.loss},
                      {"samples_per_second", p.samples_per_second},
                      {"step_ms", p.step_ms},
                      {"bytes_per_step", p.bytes_per_step}});
  j["history"] = {{"stride", s.history_stride}, {"points", std::move(points)}};

  j["evaluations"] = EvalHistoryJson(s.evaluations);

  ReportJson sync = ReportJson::array();
  for (const SyncPoint& c : s.sync_changes)
    sync.push_back({{"step", c.step}, {"sync_every", c.sync_every}});
  j["sync_changes"] = std::move(sync);

  ReportJson recent = ReportJson::array();
  for (const RecentEvent& e : s.events) {
    ReportJson r = {{"seconds", e.seconds}, {"step", e.step}, {"event", e.kind}};
    if (e.worker >= 0) r["worker"] = e.worker;
    if (!e.worker_name.empty()) r["name"] = e.worker_name;
    if (!e.detail.empty()) r["detail"] = e.detail;
    recent.push_back(std::move(r));
  }
  j["events"] = {{"total", s.events_total}, {"recent", std::move(recent)}};

  j["histograms"] = {{"step_seconds", HistogramJson(s.step_seconds)},
                     {"barrier_wait_seconds", HistogramJson(s.barrier_wait_seconds)}};
  return j;
}

}  // namespace mt
