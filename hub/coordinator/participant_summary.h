// The workers for the hub's progress line: each one's batch and pace, or
// past `listed` workers the spread and the slowest, and how many are left
// out ("worker0 b64 310 us/sample, worker1 b12 ...; 1 left out").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "hub/membership/membership.h"
#include "hub/policy/batch_controller.h"
#include "hub/report/run_metrics.h"

namespace mt {

std::string SummariseParticipants(const Membership& members, const BatchController& controller,
                                  size_t listed);

// The progress line's summary, each time with how often the split changed
// since the last one ("; batches changed 3x").
class ProgressSummary {
 public:
  std::string Next(const Membership& members, const BatchController& controller,
                   const RunMetrics& metrics, size_t listed);

 private:
  int64_t batch_changes_summarised_ = 0;
};

}  // namespace mt
