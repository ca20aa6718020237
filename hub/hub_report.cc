// The hub's --report JSON: what scripts, benchmarks and tests read.
#include <spdlog/spdlog.h>

#include "core/util/atomic_file.h"
#include "core/util/json.h"
#include "core/util/process_stats.h"
#include "hub/hub.h"

namespace mt {

void Hub::WriteReport(double train_seconds, int64_t samples) {
  if (config_.report_path.empty()) return;
  const EpochRecord last = epochs_.empty() ? EpochRecord{} : epochs_.back();
  Json r = Json::Object();
  r.Set("mode", "hub")
      .Set("model", spec_.name())
      .Set("dataset", config_.dataset)
      .Set("global_batch", global_batch_)
      .Set("optimizer", optimizer_->config().kind)
      .Set("lr", static_cast<double>(optimizer_->config().lr))
      .Set("seed", config_.seed)
      .Set("parameters", static_cast<int64_t>(model_->ParamCount()))
      .Set("test_accuracy", last.test_accuracy)
      .Set("test_loss", last.test_loss)
      .Set("final_loss", last.train_loss)
      .Set("steps", static_cast<int64_t>(step_))
      .Set("samples", samples)
      .Set("train_seconds", train_seconds)
      .Set("samples_per_second", train_seconds > 0 ? samples / train_seconds : 0.0)
      .Set("hub_reduce_seconds", reduce_seconds_)
      .Set("hub_broadcast_seconds", broadcast_seconds_ + write_cpu_ns_ * 1e-9)
      // CPU seconds of the hub's own work (averaging, optimizer, broadcast
      // including the writer threads) over the run's wall time.
      .Set("hub_share", train_seconds > 0 ? (reduce_seconds_ + broadcast_seconds_ + write_cpu_ns_ * 1e-9) / train_seconds : 0.0)
      // The same work in wall time of the step loop: inflated when workers
      // share the hub's cores, as on one machine.
      .Set("hub_wall_share", train_seconds > 0 ? wall_seconds_ / train_seconds : 0.0)
      // All the hub process's CPU during the step loop, evaluation excluded:
      // adds receiving and parsing the workers' gradients and gRPC's own
      // threads to the above.
      .Set("hub_process_share", train_seconds > 0 ? process_seconds_ / train_seconds : 0.0)
      .Set("peak_rss_bytes", PeakRssBytes())
      .Set("stop_reason", stop_reason_)
      .Set("batch_policy", controller_.policy() == BatchPolicy::kFixed ? "fixed" : "balanced")
      .Set("compression", config_.compression)
      // -1 unless the run continued from a checkpoint: then the step it
      // continued from, so steps - resumed_from_step were trained here.
      .Set("resumed_from_step", resumed_from_)
      .Set("batch_change_count", batch_change_count_)
      .Set("gradient_bytes_in", gradient_bytes_in_)
      .Set("result_bytes_out", result_bytes_out_)
      .Set("gradient_bytes_per_step", step_ > 0 ? static_cast<double>(gradient_bytes_in_ + result_bytes_out_) /
                                                      static_cast<double>(step_ - std::max<int64_t>(0, resumed_from_))
                                                : 0.0);
  Json workers = Json::Array();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& s : slots_) {
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
                       .Set("ms_per_sample", controller_.ms_per_sample(s->id))
                       .Set("overhead_ms", controller_.overhead_ms(s->id))
                       .Set("left_because", s->left_because)
                       .Set("battery_percent", s->device_status.battery_percent())
                       .Set("charging", s->device_status.charging())
                       .Set("unmetered", s->device_status.unmetered())
                       .Set("temperature_c", s->device_status.has_temperature() ? Json(s->device_status.temperature_c()) : Json()));
    }
  }
  r.Set("workers", std::move(workers));
  Json changes = Json::Array();
  for (const auto& c : batch_changes_) {
    Json batches = Json::Object();
    for (const auto& [name, b] : c.batches) batches.Set(name, b);
    changes.Push(Json::Object().Set("step", c.step).Set("batches", std::move(batches)));
  }
  r.Set("batch_changes", std::move(changes));
  Json per_epoch = Json::Array();
  for (const auto& e : epochs_)
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
