// --aggregate auto with 3+ workers: how each worker's contribution lines up
// with the sum of the others', summed over a step's segments into a cosine
// and smoothed over steps. Honest workers on the same data agree a little
// (> 0) or, beside a hostile one, not at all (~0); a sign flip disagrees
// with both honest ones, and shows up here long before any one step can
// tell it from noise.
//
// As the persistence watch (hub/round/persistence_watch.h), it follows a
// worker across Leave and Join by its lineage (hub/membership/lineages.h):
// a new session continues the lowest cosine an earlier one of its lineage
// left, and is refused on it only once its own steps point against the
// others too (kOwnSteps of them, their mean below -kBound), so an honest
// phone behind a hostile one's address is judged on its own steps.
// Pure: keyed by worker id and lineage, no messages, no clocks.
#pragma once

#include <cstddef>
#include <vector>

#include "hub/aggregation/robust_aggregate.h"
#include "hub/round/lineage_records.h"

namespace mt {

class AlignmentWatch {
 public:
  // A worker whose smoothed cosine stays below -kBound after kMinSteps
  // steps is refused.
  static constexpr double kSmoothing = 0.1;
  static constexpr int kMinSteps = 10;
  static constexpr double kBound = 0.2;
  // A session's own steps before its lineage's record may count against
  // it: with 3, an honest session's own mean fell below -kBound by chance
  // about once in a hundred sessions beside a sign flip (per-step noise of
  // 0.15); with 6, about once in two thousand.
  static constexpr int kOwnSteps = 6;
  // Where the data differ by design (mthub --partition), how far below the
  // median of the step's cosines a refused worker must be (measured with
  // LeNet-5, Dirichlet 0.5: a sign flip 0.14 to 0.35 below honest workers
  // that were themselves at -0.4 to -0.65 beside it).
  static constexpr double kSpread = 0.2;

  // A new step: this step's sums start again (its running cosine stays).
  void BeginStep();
  // One segment's alignment of worker `id` of `lineage` (-1: none;
  // RobustAggregator::alignment). Allocates only for an id never seen before.
  void Add(int id, const RobustAggregator::Alignment& a, int lineage = -1);
  // At the step's last segment, for each of ids[0..n): folds the step's
  // cosine into its running one. Returns the index into ids of the worker
  // that keeps pulling against the others the most, or -1. `spread` > 0
  // (the workers' data differ by design): it must also be below the
  // median of the step's cosines by that much. Allocates nothing once n
  // workers were seen.
  int EndStep(const int* ids, size_t n, double spread = 0);
  // Its smoothed cosine (its lineage's, where it continues it; 0 before
  // any step).
  double cosine(int id) const;
  // Whether it is judged on an earlier session's record (of its lineage).
  bool continues(int id) const;

 private:
  struct Trace {
    double cosine = 0;  // smoothed from the first step's
    int steps = 0;
    void Fold(double c) {
      cosine = steps == 0 ? c : (1 - kSmoothing) * cosine + kSmoothing * c;
      ++steps;
    }
  };
  struct Entry {
    double dot = 0, self = 0, others = 0;  // this step's, over its segments
    Trace own;                             // this session's
    Trace line;                            // its lineage's record, continued
    double own_sum = 0;                    // of its own steps' cosines, for their plain mean
    int lineage = -1;
    bool inherited = false, continues = false, seen = false;
  };
  Entry& At(int id, int lineage = -1);
  const Entry* Find(int id) const;

  std::vector<Entry> entries_;  // index = worker id
  LineageRecords<Trace> lineages_;
  std::vector<double> judged_, sorted_;  // the step's, by index into ids
};

}  // namespace mt
