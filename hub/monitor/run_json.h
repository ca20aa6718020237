// The one writer of the run and its workers as the hub shows them: the
// --report (hub/hub_report.h) and /api/status (status_json.h) both call
// these, so a field added here appears in both.
#pragma once

#include <optional>

#include "core/train/run_summary.h"
#include "hub/monitor/status_snapshot.h"

namespace mt {

// Unknown (unset) is null, never a made-up 0 or false.
template <class T>
ReportJson JsonOrNull(const std::optional<T>& v) {
  return v ? ReportJson(*v) : ReportJson();
}

// The run as configured: /api/status's "run", the report's top level.
// "sync_every" is the setting: the fixed H, or "auto".
ReportJson RunJson(const RunInfo& r);

// --dp-clip's settings and the epsilon spent: /api/status's "privacy", the
// report's and the exported model's "differential_privacy".
ReportJson PrivacyJson(const PrivacyStatus& p);

// One worker; unknown device figures (no battery, no sensor) are null.
// "batch" and "last_batch" are the same figure under the name each view
// has always used.
ReportJson WorkerJson(const WorkerRow& w);

}  // namespace mt
