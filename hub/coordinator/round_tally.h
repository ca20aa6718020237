// After a round's barrier: who finished it (their samples and loss, their
// times for the batch controller, their digests checked), and what the
// times of a round everyone finished tell the adaptive deadline
// (hub/policy/step_deadline.h) and --sync-every/--compress auto. Not
// thread-safe: the step coordinator calls it under its lock.
#pragma once

#include "hub/coordinator/round_context.h"
#include "hub/policy/step_deadline.h"
#include "hub/round/round_outcome.h"
#include "hub/round/segment_reducer.h"

namespace mt {

class RoundTally {
 public:
  RoundTally(RoundContext& round, StepDeadline& deadline) : r_(round), deadline_(deadline) {}

  // Closes the round the reducer reduced: nothing applies when a
  // contribution was refused or nobody finished (the round runs again from
  // the master weights); else the round state moves past it, its times are
  // observed, and the outcome says what the master should apply.
  RoundOutcome Close(SegmentReducer& reducer);

  // --sync-every auto moved from `before` local steps to the current ones:
  // recorded in the metrics, announced as an event and logged.
  static void RecordSyncChange(RoundContext& round, int before);

 private:
  // Who finished the round: its samples and loss, each worker's stats.
  RoundOutcome Count();
  // Times of a round everyone finished: the deadline's pace, and the
  // exchange policy's evidence (its changes recorded and announced).
  void Observe();
  void RecordCompressionChange(Compression from);

  RoundContext& r_;
  StepDeadline& deadline_;
};

}  // namespace mt
