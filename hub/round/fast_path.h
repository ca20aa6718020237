// The transport's fast path (StepCoordinator::AdvanceIfComplete): the
// transport thread that brings a step's last gradient completes the step
// and publishes the next itself, rather than waking the run thread for it.
#pragma once

#include "hub/round/round_outcome.h"

namespace mt {

struct FastPath {
  bool armed = false;            // by the run thread, while it waits at the barrier
  bool advanced = false;         // the transport completed the step meanwhile
  bool published_ahead = false;  // and published the next one
  RoundOutcome outcome;          // of the step it completed
};

}  // namespace mt
