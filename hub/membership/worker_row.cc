#include "hub/membership/worker_row.h"

namespace mt {

WorkerRow WorkerRowOf(const WorkerSlot& s, const BatchController& controller) {
  WorkerRow row;
  row.id = s.id;
  row.name = s.name;
  row.state = s.set_aside && s.in_run() ? "set aside" : StateName(s.state);
  row.device = s.device;
  row.placement = s.placement;
  row.peer = s.peer;
  row.left_because = s.left_because;
  row.batch = s.last_batch;
  row.max_batch = s.max_batch;
  row.ms_per_sample = controller.ms_per_sample(s.id);
  row.overhead_ms = controller.overhead_ms(s.id);
  const WorkerStats& st = s.stats;
  row.steps = st.steps;
  row.samples = st.samples;
  row.steps_missed = st.steps_missed;
  row.resyncs = st.resyncs;
  row.digests_checked = st.digests_checked;
  row.clipped_segments = st.clipped_segments;
  row.alignment = s.alignment;
  row.persistence_peak = st.persistence_peak;
  row.mean_compute_ms = st.steps ? st.compute_ms / static_cast<double>(st.steps) : 0.0;
  row.bytes_in = st.bytes_in;
  row.bytes_out = st.bytes_out;
  const proto::DeviceStatus& d = s.device_status;
  if (d.has_battery_percent()) row.battery_percent = d.battery_percent();
  if (d.has_charging()) row.charging = d.charging();
  if (d.has_unmetered()) row.unmetered = d.unmetered();
  if (d.has_temperature_c()) row.temperature_c = d.temperature_c();
  return row;
}

}  // namespace mt
