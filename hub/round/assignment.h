// One worker's share of a step (or round): which samples it computes on
// and how many local steps it takes. Plain data: the transport turns it
// into the plan's message (hub/coordinator/step_messages.h).
#pragma once

#include <cstdint>

namespace mt {

struct Assignment {
  int64_t step = 0;
  int64_t epoch = 0;
  int64_t offset = 0;  // its first sample in the epoch's order
  int batch = 0;
  int worker_id = -1;
  // Local SGD: the round's steps, and the global batch between one local
  // step's samples and the next; 0 and 0 in the per-step mode.
  int local_steps = 0;
  int64_t stride = 0;
};

}  // namespace mt
