#include "hub/monitor/run_json.h"

#include <cmath>

namespace mt {

ReportJson RunJson(const RunInfo& r) {
  return {{"model", r.model},
          {"dataset", r.dataset},
          {"parameters", r.parameters},
          {"total_steps", r.total_steps},
          {"total_epochs", r.total_epochs},
          {"global_batch", r.global_batch},
          {"workers_expected", r.workers_expected},
          {"first_step", r.first_step},
          {"compression", r.compression},
          {"sync_every",
           r.sync_every_setting > 0 ? ReportJson(r.sync_every_setting) : ReportJson("auto")},
          {"partition", r.partition},
          {"partition_histograms", r.partition_histograms},
          {"class_names", r.class_names}};
}

ReportJson PrivacyJson(const PrivacyStatus& p) {
  return {{"clip", p.clip},
          {"noise_multiplier", p.noise_multiplier},
          {"delta", p.delta},
          {"target_epsilon", p.target_epsilon > 0 ? ReportJson(p.target_epsilon) : ReportJson()},
          {"noise_added_by", p.noise_added_by},
          {"unit", "one worker's update per round"},
          {"rounds", p.rounds},
          // Without noise (--dp-noise 0: clipping alone) nothing is private.
          {"epsilon", std::isfinite(p.epsilon) ? ReportJson(p.epsilon) : ReportJson()}};
}

ReportJson WorkerJson(const WorkerRow& w) {
  const double steps = static_cast<double>(w.steps);
  return {{"id", w.id},
          {"name", w.name},
          {"state", w.state},
          {"device", w.device},
          {"placement", w.placement},
          {"peer", w.peer},
          {"batch", w.batch},
          {"last_batch", w.batch},
          {"max_batch", w.max_batch},
          {"mean_batch", w.steps ? static_cast<double>(w.samples) / steps : 0.0},
          {"ms_per_sample", w.ms_per_sample},
          {"overhead_ms", w.overhead_ms},
          {"mean_compute_ms", w.mean_compute_ms},
          {"steps", w.steps},
          {"samples", w.samples},
          {"steps_missed", w.steps_missed},
          {"resyncs", w.resyncs},
          {"digests_checked", w.digests_checked},
          {"clipped_segments", w.clipped_segments},
          {"alignment", w.alignment},
          {"persistence_peak", w.persistence_peak},
          {"bytes_in", w.bytes_in},
          {"bytes_out", w.bytes_out},
          {"battery_percent", JsonOrNull(w.battery_percent)},
          {"charging", JsonOrNull(w.charging)},
          {"unmetered", JsonOrNull(w.unmetered)},
          {"temperature_c", JsonOrNull(w.temperature_c)},
          {"left_out_events", w.left_out_events},
          {"back_events", w.back_events},
          {"left_because", w.left_because}};
}

}  // namespace mt
