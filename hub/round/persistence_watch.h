// --aggregate auto with 3+ workers on the same data: how much of each
// worker's residual from the robust centre keeps one direction across
// steps. An honest worker's residual is its batch's noise, which points
// anywhere from one step to the next and averages away; a worker that adds
// a constant vector (even one of only its gradient's norm, which stays
// inside every clip radius and near zero cosine with the others) leaves
// the same vector in every residual, and a long mean keeps it. Measured
// over the count sketches of hub/aggregation/robust_aggregate.h (kSketchSize floats a
// worker, not the model's size), smoothed over steps:
//
//   persistence = |mean residual|^2 / mean |residual|^2
//
// about kSmoothing / (2 - kSmoothing) for noise, towards 1 for a constant.
//
// A worker that Leaves and Joins again gets a new id, and a watch keyed by
// id alone judged it afresh each time (issue 45: a bias that rejoined
// every 25 gradients was never refused). So each worker also continues the
// record of its lineage (hub/membership/lineages.h: its certificate, or its
// address) where an earlier session left it, and is refused on that record
// too, but only while its own residual keeps the record's direction
// (cosine above kContinues): honest phones behind an attacker's address
// have residuals that point anywhere, about +-1/sqrt(kBuckets) to it, and
// are judged on their own steps alone.
// Pure: keyed by worker id and lineage, no messages, no clocks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "hub/aggregation/robust_aggregate.h"
#include "hub/round/lineage_records.h"

namespace mt {

class PersistenceWatch {
 public:
  static constexpr size_t kBuckets = RobustAggregator::kSketchSize;
  // The weight of a step in the running means: a memory of ~1/kSmoothing
  // steps, a noise floor of kSmoothing / (2 - kSmoothing) ~ 0.026.
  static constexpr double kSmoothing = 0.05;
  // A worker whose persistence is above kBound after kMinSteps steps, and
  // kRatio times the median of the step's workers', is refused.
  static constexpr int kMinSteps = 30;
  static constexpr double kBound = 0.15;
  static constexpr double kRatio = 3;
  // A new session continues its lineage's record while the cosine of its
  // own mean residual with the record's is above this.
  static constexpr double kContinues = 0.5;

  // The noise floor of a running mean over `steps` steps from zero:
  // the persistence of residuals that point anywhere (1 at the first step).
  static double Floor(int steps);

  // A new step: this step's sums start again (the running means stay).
  // Constant time: a worker's sums are cleared when the step first touches
  // them, not for every worker ever seen.
  void BeginStep() { ++step_; }
  // One segment's residual of worker `id` of `lineage` (-1: none): its
  // sketch (kBuckets floats) and squared norm. Allocates only for an id
  // never seen before.
  void Add(int id, const float* sketch, double energy, int lineage = -1);
  // At the step's last segment, for each of ids[0..n): folds the step into
  // its running means. Returns the index into ids of the worker whose
  // residual keeps its direction the most, beyond the bounds, or -1.
  // Allocates nothing once n workers were seen.
  int EndStep(const int* ids, size_t n);
  // Its persistence now (its lineage's, where it continues it), and the
  // highest it reached (0 before any step).
  double persistence(int id) const;
  double peak(int id) const;
  // Whether it continues an earlier session's record (of its lineage).
  bool continues(int id) const;

 private:
  // Running means from zero over a run of steps, and what they give.
  struct Trace {
    std::vector<double> mean;  // kBuckets
    double energy = 0;
    double weight = 0;  // of the running means: 1 - (1 - kSmoothing)^steps
    double persistence = 0;
    int steps = 0;
    void Fold(const std::vector<double>& step, double step_energy);
    // Persistence beyond the noise floor of its steps: which of two
    // records of a lineage is the more suspicious.
    double excess() const { return persistence - Floor(steps); }
  };
  struct Entry {
    std::vector<double> step;  // kBuckets: this step's residual sketch
    double step_energy = 0;
    Trace own;                      // this session's steps alone
    Trace line;                     // its lineage's record, continued by this session
    std::vector<double> inherited;  // the record's mean when it joined (empty: none)
    int lineage = -1;
    bool continues = false;  // its own residual keeps the inherited direction
    double peak = 0;
    uint64_t summed_in = 0;  // the step `step` and step_energy belong to
  };
  Entry& At(int id, int lineage = -1);
  // At(id), with its step sums cleared if they are from an earlier step.
  Entry& InThisStep(int id, int lineage = -1);
  const Entry* Find(int id) const;

  uint64_t step_ = 1;           // BeginStep's count (0: no entry's sums)
  std::vector<Entry> entries_;  // index = worker id
  LineageRecords<Trace> lineages_;
  std::vector<double> own_, line_;  // the step's persistences, own and continued
  std::vector<double> sorted_;      // a copy of one of them, for its median
};

}  // namespace mt
