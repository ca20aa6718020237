// /metrics: the live snapshot in Prometheus' text exposition format
// (version 0.0.4): a HELP and a TYPE line before each family's samples,
// counters ending in _total, histograms as _bucket{le=...} (cumulative,
// ending at le="+Inf"), _sum and _count; per-worker series carry
// worker="<name>" and id="<id>" labels (names need not be unique). Every
// name starts mt_hub_. A pure function, tested without sockets.
#pragma once

#include <string>

#include "hub/monitor/status_snapshot.h"

namespace mt {

std::string PrometheusText(const StatusSnapshot& s);

// A label value with \, " and newlines escaped, as the format requires.
std::string EscapeLabelValue(const std::string& value);

}  // namespace mt
