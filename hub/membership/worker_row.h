// One worker as the live views and the --report show it: the row is taken
// from its slot and its batch controller under the coordinator's lock, and
// kept for a while after the worker is gone (departed_workers.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "hub/membership/worker_slot.h"
#include "hub/policy/batch_controller.h"

namespace mt {

// One worker as the coordinator knows it, plus what the event chain counted:
// what both the --report and /api/status write of it (hub/monitor/run_json.h).
struct WorkerRow {
  int id = 0;
  std::string name, state, device, placement, peer;
  std::string left_because;  // its Leave reason, if it left
  int batch = 0;             // of the step in progress, or the last it took part in
  int max_batch = 0;         // what fits in its memory budget (0: no cap)
  // The batch controller's estimates (< 0: not measured yet).
  double ms_per_sample = 0, overhead_ms = 0;
  double mean_compute_ms = 0;
  int64_t steps = 0, samples = 0, steps_missed = 0, resyncs = 0;
  int64_t digests_checked = 0, clipped_segments = 0;  // WorkerStats says what they mean
  double alignment = 0;
  double persistence_peak =
      0;  // WorkerStats                               // --aggregate auto, 3+ workers (WorkerSlot)
  int64_t bytes_in = 0, bytes_out = 0;  // gradient payload in, results out
  // Unset: the device does not say (no battery, no sensor).
  std::optional<double> battery_percent, temperature_c;
  std::optional<bool> charging, unmetered;
  int64_t left_out_events = 0, back_events = 0;  // missed deadlines, rejoins
};

// Under the coordinator's lock: what the live views and the report show of a worker.
WorkerRow WorkerRowOf(const WorkerSlot& s, const BatchController& controller);

}  // namespace mt
