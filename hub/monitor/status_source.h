// Assembles a snapshot for the live views: the workers' rows copied out of
// the coordinator under its lock (ForEachWorker, as the report does), then
// the rest from LiveStatus under its own; never both locks at once.
#pragma once

#include "hub/monitor/live_status.h"
#include "hub/monitor/status_snapshot.h"
#include "hub/step_coordinator.h"

namespace mt {

StatusSnapshot TakeSnapshot(const StepCoordinator& coordinator, const LiveStatus& live);

}  // namespace mt
