// What closing a step (or round) tells the run thread.
#pragma once

#include <cstdint>

#include "core/train/step_exchange.h"

namespace mt {

// What the training loop hears of a step (core/train/step_exchange.h:
// stopped at the barrier, samples in the average, steps the round covered,
// loss), and what only the hub's live views use.
struct RoundOutcome : StepOutcome {
  // For the live views (hub/monitor/): the run's payload totals when the
  // step closed, and how long the first whole gradient waited for the
  // step to close (for the slowest worker, or the deadline).
  int64_t gradient_bytes_in = 0, result_bytes_out = 0;
  double barrier_wait_seconds = 0;
};

}  // namespace mt
