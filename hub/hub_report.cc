// The hub's --report: the shared run summary (core/train/run_summary.h)
// plus what only the hub knows: its own costs, the wire, each worker.
#include <spdlog/spdlog.h>

#include "core/train/run_summary.h"
#include "hub/hub.h"
#include "hub/monitor/live_status.h"

namespace mt {

void Hub::WriteReport() {
  if (config_.report_path.empty()) return;
  const RunMetrics& m = metrics_;
  const int64_t steps = coordinator_->steps_done();
  const double write_cpu = static_cast<double>(m.write_cpu_ns.load()) * 1e-9;
  RunSummary r;
  r.mode = "hub";
  r.model = spec_.name();
  r.dataset = config_.dataset;
  r.device = "cpu";
  r.threads = config_.threads;
  r.optimizer = master_->optimizer().Kind();
  r.lr = master_->optimizer().config().lr;
  r.seed = config_.seed;
  r.parameters = static_cast<int64_t>(master_->param_count());
  r.resumed_from_step = resumed_from_;
  loop_->FillSummary(r);
  const double train_seconds = r.train_seconds;
  ReportJson& d = r.details;
  d["global_batch"] = plan_->batch();
  d["batch_policy"] = BatchPolicyName(coordinator_->batch_policy());
  d["compression"] = CompressionName(config_.compression);
  d["tls_fingerprint"] = tls_fingerprint_;  // "": plaintext (--insecure)
  // --sync-every as given ("auto" or H), the H in use at the end, and each
  // change auto made with the estimates it decided on.
  d["sync_every"] = config_.sync_every > 0 ? ReportJson(config_.sync_every) : ReportJson("auto");
  d["final_sync_every"] = coordinator_->sync_every();
  if (config_.outer_momentum > 0) d["outer_momentum"] = config_.outer_momentum;
  if (config_.outer_lr != 1) d["outer_lr"] = config_.outer_lr;
  d["overlap_rounds"] = config_.rounds_overlap();
  ReportJson sync_changes = ReportJson::array();
  for (const SyncChange& c : m.sync_changes)
    sync_changes.push_back({{"step", c.step},
                            {"from", c.from},
                            {"to", c.to},
                            {"exchange_ms", c.exchange_ms},
                            {"step_compute_ms", c.step_compute_ms}});
  d["sync_changes"] = std::move(sync_changes);
  d["hub_reduce_seconds"] = m.reduce_seconds;
  d["hub_broadcast_seconds"] = m.broadcast_seconds + write_cpu;
  // CPU seconds of the hub's own work (averaging, optimizer, broadcast
  // including the writer threads) over the run's wall time.
  d["hub_share"] = train_seconds > 0
                       ? (m.reduce_seconds + m.broadcast_seconds + write_cpu) / train_seconds
                       : 0.0;
  // The same work in wall time of the step loop: inflated when workers
  // share the hub's cores, as on one machine.
  d["hub_wall_share"] = train_seconds > 0 ? m.wall_seconds / train_seconds : 0.0;
  // All the hub process's CPU during the step loop, evaluation excluded:
  // adds receiving and parsing the workers' gradients and the transport's
  // own threads to the above.
  d["hub_process_share"] = train_seconds > 0 ? m.process_seconds / train_seconds : 0.0;
  d["aggregate"] = AggregationName(config_.aggregate);
  d["clip_factor"] = config_.clip_factor;
  d["refused_contributions"] = m.refused_contributions;
  d["steps_refused"] = m.steps_refused;
  d["batch_change_count"] = m.batch_change_count;
  d["gradient_bytes_in"] = m.gradient_bytes_in;
  d["result_bytes_out"] = m.result_bytes_out.load();
  const int64_t trained_here = steps - std::max<int64_t>(0, resumed_from_);
  d["gradient_bytes_per_step"] =
      trained_here > 0 ? static_cast<double>(m.gradient_bytes_in + m.result_bytes_out.load()) /
                             static_cast<double>(trained_here)
                       : 0.0;
  ReportJson workers = ReportJson::array();
  int64_t streamless = 0;
  coordinator_->ForEachWorker([&](const WorkerSlot& s, const BatchController& controller) {
    // A Join that never opened its stream took no part: counted, not listed
    // (a flood of them would otherwise fill the report).
    if (!s.attached) {
      ++streamless;
      return;
    }
    const WorkerStats& st = s.stats;
    ReportJson w;
    w["id"] = s.id;
    w["name"] = s.name;
    w["device"] = s.device;
    w["placement"] = s.placement;
    w["samples"] = st.samples;
    w["steps"] = st.steps;
    w["mean_batch"] =
        st.steps ? static_cast<double>(st.samples) / static_cast<double>(st.steps) : 0.0;
    w["mean_compute_ms"] = st.steps ? st.compute_ms / static_cast<double>(st.steps) : 0.0;
    w["steps_missed"] = st.steps_missed;
    w["resyncs"] = st.resyncs;
    w["digests_checked"] = st.digests_checked;
    w["clipped_segments"] = st.clipped_segments;
    w["alignment"] = s.alignment;  // --aggregate auto, 3+ workers (step_coordinator.h)
    w["max_batch"] = s.max_batch;
    w["last_batch"] = s.last_batch;
    w["ms_per_sample"] = controller.ms_per_sample(s.id);
    w["overhead_ms"] = controller.overhead_ms(s.id);
    w["left_because"] = s.left_because;
    // null: not known (no battery, or the device does not say).
    const proto::DeviceStatus& d = s.device_status;
    w["battery_percent"] = d.has_battery_percent() ? ReportJson(d.battery_percent()) : ReportJson();
    w["charging"] = d.has_charging() ? ReportJson(d.charging()) : ReportJson();
    w["unmetered"] = d.has_unmetered() ? ReportJson(d.unmetered()) : ReportJson();
    w["temperature_c"] = d.has_temperature_c() ? ReportJson(d.temperature_c()) : ReportJson();
    workers.push_back(std::move(w));
  });
  d["workers"] = std::move(workers);
  d["joins_without_stream"] = streamless;
  ReportJson changes = ReportJson::array();
  for (const auto& c : m.batch_changes) {
    ReportJson batches = ReportJson::object();
    for (const auto& [name, b] : c.batches) batches[name] = b;
    changes.push_back({{"step", c.step}, {"batches", std::move(batches)}});
  }
  d["batch_changes"] = std::move(changes);
  // Loss, step time, rate, bytes and batches over the run, downsampled
  // (core/train/step_history.h): the dashboard's series.
  d["history"] = live_->HistoryJson();
  try {
    r.Write(config_.report_path);
  } catch (const std::exception& e) {
    spdlog::error("cannot write the report: {}", e.what());
  }
}

}  // namespace mt
