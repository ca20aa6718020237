// A finished run's --report read back as the snapshot the live views show
// (status_snapshot.h), so mthub --serve-report draws it with the same page:
// the inverse of what hub/hub_report.cc and run_json.h write. What the
// report does not keep (recent events, step histograms) stays empty.
#pragma once

#include "core/train/run_summary.h"
#include "hub/monitor/status_snapshot.h"

namespace mt {

// Throws std::invalid_argument when `report` is not a hub's report.
StatusSnapshot SnapshotFromReport(const ReportJson& report);

}  // namespace mt
