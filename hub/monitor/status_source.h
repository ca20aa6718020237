// Assembles a snapshot for the live views and the --report: the workers'
// rows copied out of the coordinator under its lock (ForEachWorker), then
// the rest from LiveStatus under its own; never both locks at once.
#pragma once

#include "hub/coordinator/step_coordinator.h"
#include "hub/monitor/live_status.h"
#include "hub/monitor/status_snapshot.h"

namespace mt {

StatusSnapshot TakeSnapshot(const StepCoordinator& coordinator, const LiveStatus& live);

}  // namespace mt
