// What closing a step (or round) tells the run thread.
#pragma once

#include <cstdint>

namespace mt {

struct RoundOutcome {
  bool stopped = false;  // stopped at the barrier; nothing applied
  int64_t samples = 0;   // in the average; 0: nobody finished, the step runs again
  int64_t steps = 1;     // steps the round covered (--sync-every)
  double loss_sum = 0;
  // For the live views (hub/monitor/): the run's payload totals when the
  // step closed, and how long the first whole gradient waited for the
  // step to close (for the slowest worker, or the deadline).
  int64_t gradient_bytes_in = 0, result_bytes_out = 0;
  double barrier_wait_seconds = 0;
};

}  // namespace mt
