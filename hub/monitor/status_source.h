// Assembles a snapshot for the live views and the --report: the workers'
// rows copied out of the coordinator under its lock (ForEachWorker), then
// the rest from LiveStatus under its own; never both locks at once.
#pragma once

#include "hub/monitor/live_status.h"
#include "hub/monitor/status_snapshot.h"
#include "hub/step_coordinator.h"

namespace mt {

// Under the coordinator's lock: what the live views and the report show of a worker.
WorkerRow WorkerRowOf(const WorkerSlot& s, const BatchController& controller);

StatusSnapshot TakeSnapshot(const StepCoordinator& coordinator, const LiveStatus& live);

}  // namespace mt
