// /api/status: the live snapshot as JSON, the dashboard's only source. A
// pure function, tested without sockets.
#pragma once

#include "core/train/run_summary.h"
#include "hub/monitor/status_snapshot.h"

namespace mt {

// {"run": {...}, "state", "step", ..., "workers_by_state": {...}, "workers": [...],
//  "history": {"stride", "points": [...]}, "evaluations": [...], "sync_changes": [...],
//  "events": {"total", "recent": [...]}, "histograms": {...}}; unknown
// values (no loss yet, no battery) are null.
ReportJson StatusJson(const StatusSnapshot& s);

}  // namespace mt
