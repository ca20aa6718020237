// The coordinator's side of the reduction: it hands the segment reducer
// (hub/round/segment_reducer.h) the contributions as they stand, and acts
// on its verdicts: the noise of --dp-clip (hub/aggregation/dp_aggregate.h),
// the outer optimizer's step, the encoded segment sent back at once, or
// the refused worker dropped. Not thread-safe: the step coordinator calls
// it under its lock.
#pragma once

#include <vector>

#include "hub/aggregation/dp_aggregate.h"
#include "hub/aggregation/fednova.h"
#include "hub/coordinator/round_context.h"
#include "hub/round/segment_reducer.h"

namespace mt {

class RoundReduction {
 public:
  // Over the master's segments (MasterModel::segments).
  explicit RoundReduction(RoundContext& round);

  // Reduces every segment that each participant still in the round has
  // delivered, in order, and sends all but the last segment's result to
  // them at once (the last goes with the next plan). Returns true when a
  // contribution was refused (its worker dropped): waiters should wake.
  bool ReduceReady();

  SegmentReducer& reducer() { return reducer_; }
  const SegmentReducer& reducer() const { return reducer_; }
  DpAggregate& dp() { return dp_; }
  const DpAggregate& dp() const { return dp_; }

 private:
  // Combines the reducer's next segment and sends it on; false when a
  // contribution was refused (its worker is then dropped).
  bool ReduceSegment();
  // The worker of the reducer's input i.
  WorkerSlot* InputSlot(size_t i) const;
  bool Refuse(size_t input, const std::string& why);
  // Rounds of unequal length (hub/policy/short_rounds.h) averaged per step
  // (hub/aggregation/fednova.h): the inputs' weights and scale_.
  void PerStepWeights();

  RoundContext& r_;
  SegmentReducer reducer_;
  DpAggregate dp_;                     // --dp-clip: the noise on the combination and its accountant
  std::vector<int> steps_;             // each input's local steps this round
  std::vector<int64_t> data_weights_;  // PerStepWeights' scratch
  FedNovaWeights fednova_;             // and its result
  double scale_ = 1;                   // FedNova's on the combined segment
};

}  // namespace mt
