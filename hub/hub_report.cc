// The hub's --report JSON: what scripts, benchmarks and tests read.
#include <spdlog/spdlog.h>

#include "core/util/atomic_file.h"
#include "core/util/json.h"
#include "core/util/process_stats.h"
#include "hub/hub.h"

namespace mt {

void Hub::WriteReport(double train_seconds) {
  if (config_.report_path.empty()) return;
  const RunMetrics& m = metrics_;
  const EpochRecord last = m.epochs.empty() ? EpochRecord{} : m.epochs.back();
  const int64_t samples = m.samples, steps = coordinator_->steps_done();
  const double write_cpu = static_cast<double>(m.write_cpu_ns.load()) * 1e-9;
  Json r = Json::Object();
  r.Set("mode", "hub")
      .Set("model", spec_.name())
      .Set("dataset", config_.dataset)
      .Set("global_batch", shape_.global_batch)
      .Set("optimizer", master_->optimizer().config().kind)
      .Set("lr", static_cast<double>(master_->optimizer().config().lr))
      .Set("seed", config_.seed)
      .Set("parameters", static_cast<int64_t>(master_->param_count()))
      .Set("test_accuracy", last.test_accuracy)
      .Set("test_loss", last.test_loss)
      .Set("final_loss", last.train_loss)
      .Set("steps", steps)
      .Set("samples", samples)
      .Set("train_seconds", train_seconds)
      .Set("samples_per_second", train_seconds > 0 ? samples / train_seconds : 0.0)
      .Set("hub_reduce_seconds", m.reduce_seconds)
      .Set("hub_broadcast_seconds", m.broadcast_seconds + write_cpu)
      // CPU seconds of the hub's own work (averaging, optimizer, broadcast
      // including the writer threads) over the run's wall time.
      .Set("hub_share", train_seconds > 0 ? (m.reduce_seconds + m.broadcast_seconds + write_cpu) / train_seconds : 0.0)
      // The same work in wall time of the step loop: inflated when workers
      // share the hub's cores, as on one machine.
      .Set("hub_wall_share", train_seconds > 0 ? m.wall_seconds / train_seconds : 0.0)
      // All the hub process's CPU during the step loop, evaluation excluded:
      // adds receiving and parsing the workers' gradients and gRPC's own
      // threads to the above.
      .Set("hub_process_share", train_seconds > 0 ? m.process_seconds / train_seconds : 0.0)
      .Set("peak_rss_bytes", PeakRssBytes())
      .Set("stop_reason", stop_reason_)
      .Set("batch_policy", coordinator_->batch_policy() == BatchPolicy::kFixed ? "fixed" : "balanced")
      .Set("compression", config_.compression)
      // -1 unless the run continued from a checkpoint: then the step it
      // continued from, so steps - resumed_from_step were trained here.
      .Set("resumed_from_step", resumed_from_)
      .Set("batch_change_count", m.batch_change_count)
      .Set("gradient_bytes_in", m.gradient_bytes_in)
      .Set("result_bytes_out", m.result_bytes_out)
      .Set("gradient_bytes_per_step", steps > std::max<int64_t>(0, resumed_from_)
                                          ? static_cast<double>(m.gradient_bytes_in + m.result_bytes_out) /
                                                static_cast<double>(steps - std::max<int64_t>(0, resumed_from_))
                                          : 0.0);
  Json workers = Json::Array();
  coordinator_->ForEachWorker([&](const WorkerSlot& w, const BatchController& controller) {
      const WorkerSlot* s = &w;
      const WorkerStats& st = s->stats;
      workers.Push(Json::Object()
                       .Set("id", s->id)
                       .Set("name", s->name)
                       .Set("device", s->device)
                       .Set("placement", s->placement)
                       .Set("samples", st.samples)
                       .Set("steps", st.steps)
                       .Set("mean_batch", st.steps ? static_cast<double>(st.samples) / st.steps : 0.0)
                       .Set("mean_compute_ms", st.steps ? st.compute_ms / st.steps : 0.0)
                       .Set("steps_missed", st.steps_missed)
                       .Set("resyncs", st.resyncs)
                       .Set("max_batch", s->max_batch)
                       .Set("last_batch", s->last_batch)
                       .Set("ms_per_sample", controller.ms_per_sample(s->id))
                       .Set("overhead_ms", controller.overhead_ms(s->id))
                       .Set("left_because", s->left_because)
                       .Set("battery_percent", s->device_status.battery_percent())
                       .Set("charging", s->device_status.charging())
                       .Set("unmetered", s->device_status.unmetered())
                       .Set("temperature_c", s->device_status.has_temperature() ? Json(s->device_status.temperature_c()) : Json()));
  });
  r.Set("workers", std::move(workers));
  Json changes = Json::Array();
  for (const auto& c : m.batch_changes) {
    Json batches = Json::Object();
    for (const auto& [name, b] : c.batches) batches.Set(name, b);
    changes.Push(Json::Object().Set("step", c.step).Set("batches", std::move(batches)));
  }
  r.Set("batch_changes", std::move(changes));
  Json per_epoch = Json::Array();
  for (const auto& e : m.epochs)
    per_epoch.Push(Json::Object()
                       .Set("epoch", e.epoch)
                       .Set("step", e.step)
                       .Set("train_loss", e.train_loss)
                       .Set("test_loss", e.test_loss)
                       .Set("test_accuracy", e.test_accuracy));
  r.Set("epochs", std::move(per_epoch));
  try {
    WriteFileAtomically(config_.report_path, r.Dump());
  } catch (const std::exception& e) {
    spdlog::error("cannot write the report: {}", e.what());
  }
}

}  // namespace mt
