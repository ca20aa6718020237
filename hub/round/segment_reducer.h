// The reduction of one step (or round of local steps) over float spans.
// Each contribution fills the same parameter vector segment by segment, in
// travel order (proto/wire.h: last layer first); a segment is combined
// (hub/aggregation/robust_aggregate.h) as soon as every contribution still in the step
// holds it, so the exchange overlaps the workers' backward pass.
//
// Pure: no messages, no threads, no clocks. The coordinator hands it the
// contributions as they stand (events in) and acts on its verdicts
// (decisions out): send the combined segment, or drop the refused worker.
// A refusal before any segment went out just combines the segment again
// without that worker; after, the workers hold parts of a step that will
// not be applied, and the step runs again from the full state.
//
// Only Begin allocates, and only when the participants outnumber every
// step before: a steady step allocates nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "hub/aggregation/robust_aggregate.h"
#include "hub/round/alignment_watch.h"
#include "hub/round/norm_history.h"
#include "hub/round/persistence_watch.h"

namespace mt {

struct SegmentRange {
  size_t begin = 0, end = 0;
  size_t size() const { return end - begin; }
};

// One participant's contribution as it stands.
struct Contribution {
  int id = -1;                    // its worker
  const float* values = nullptr;  // the whole parameter vector its segments land in
  int64_t batch = 0;              // its weight: the samples it was computed on
  size_t segments_in = 0;         // how many segments of it have arrived, in order
  int lineage = -1;               // its worker's across sessions (hub/membership/lineages.h)
};

class SegmentReducer {
 public:
  // `segments` tile the parameter vector in travel order.
  SegmentReducer(std::vector<SegmentRange> segments, AggregatorOptions options);

  // A new step `step` (0-based) of at most `participants` contributions;
  // `local`: they are weight changes of local SGD rather than gradients
  // (only the wording of refusals differs).
  void Begin(int64_t step, bool local, size_t participants);

  // The contributions to consider for the next segment, each call starting
  // from none; in worker id order, so the result does not depend on the
  // order they arrived in.
  void ClearInputs() { inputs_.clear(); }
  void AddInput(const Contribution& c) { inputs_.push_back(c); }
  // Input i's weight, in place of its samples (hub/aggregation/fednova.h).
  void SetWeight(size_t i, int64_t weight) { inputs_[i].batch = weight; }
  const std::vector<Contribution>& inputs() const { return inputs_; }

  // Whether the next segment can be combined: there are inputs and every
  // one holds it.
  bool Ready() const;
  struct Verdict {
    int refused = -1;  // index into inputs() of a contribution refused; -1: none
    std::string why;   // for the log and the worker's goodbye
    bool ok() const { return refused < 0; }
  };
  // Combines the next segment of inputs() into out[seg.begin, seg.end)
  // (out: a whole parameter vector), weighted by batch; refuses an input
  // far beyond the median norm (3+ inputs) or a non-finite combination.
  Verdict Combine(float* out);
  // After a successful Combine, --aggregate auto with 3+ inputs: adds the
  // segment's alignments and residual sketches; at the step's last
  // segment, refuses a worker that keeps pulling against the others
  // (AlignmentWatch) or whose residual keeps one direction
  // (PersistenceWatch: a constant bias).
  Verdict CheckAlignment();
  // The input of the last Combine with the largest norm (to blame for a
  // combination that is not finite further on).
  int Largest() const;
  // Whether the last Combine scaled input i down.
  bool clipped(size_t i) const { return aggregator_.clipped(i); }
  // The segment is done (sent): the next one is up.
  void Commit() { ++reduced_; }
  // The worker of an input was refused and dropped. Returns true when the
  // step can no longer be applied (segments of it went out already).
  bool Refused();

  const SegmentRange& segment(size_t k) const { return segments_[k]; }
  size_t segment_count() const { return segments_.size(); }
  // The next segment to combine; segment_count() once all are.
  size_t reduced() const { return reduced_; }
  bool last_segment() const { return reduced_ + 1 == segments_.size(); }
  bool done() const { return reduced_ == segments_.size(); }
  bool step_refused() const { return step_refused_; }
  void ClearRefused() { step_refused_ = false; }
  const AggregatorOptions& options() const { return aggregator_.options(); }
  // --aggregate auto, 3+ workers: worker id's smoothed cosine.
  double alignment(int id) const { return alignment_.cosine(id); }
  // --aggregate auto, 3+ workers on the same data: the highest persistence
  // of worker id's residual so far.
  double persistence_peak(int id) const { return persistence_.peak(id); }

 private:
  const char* ContributionName() const { return local_ ? "weight change" : "gradient"; }

  const std::vector<SegmentRange> segments_;
  RobustAggregator aggregator_;
  AlignmentWatch alignment_;
  PersistenceWatch persistence_;
  NormHistory norms_;
  int64_t step_ = 0;
  bool local_ = false;
  size_t reduced_ = 0;
  bool step_refused_ = false;
  // Reused by every segment.
  std::vector<Contribution> inputs_;
  std::vector<const float*> values_;
  std::vector<float> weights_;
  std::vector<double> usual_;
  std::vector<int> ids_;
};

}  // namespace mt
