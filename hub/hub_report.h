// What the hub's --report takes from the live snapshot (hub/monitor/
// status_source.h), written by the functions that write /api/status
// (hub/monitor/run_json.h), so the two agree on every field they share.
#pragma once

#include "core/train/run_summary.h"
#include "hub/monitor/status_snapshot.h"

namespace mt {

// The run as configured, at the report's top level (RunJson), and the
// number of local steps per round at the end as "final_sync_every"
// (/api/status's top-level "sync_every").
void ReportRun(const StatusSnapshot& s, RunSummary& r);

// "workers" (WorkerJson each; of those gone for good only the latest),
// "joins_without_stream" and the departed workers' counts.
void ReportWorkers(const StatusSnapshot& s, ReportJson& details);

}  // namespace mt
