// A run's per-step history (loss, step time, samples, bytes, batches) for
// reports and live views, bounded however long the run: at most max_points
// points, each standing for `stride` consecutive steps. When full,
// neighbouring points merge and the stride doubles, so the series always
// spans the whole run at an even resolution and a point's figures are means
// over the steps it covers, not one step picked out of them.
//
// Not thread-safe: its owner serialises access. Adding a step allocates
// only when a point closes (a vector append, amortised).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/train/run_summary.h"

namespace mt {

// One step as it finished.
struct StepSample {
  int64_t step = 0;     // steps done after it (1-based)
  int64_t steps = 1;    // steps it covered (local SGD rounds cover several)
  double seconds = 0;   // since training began
  double loss_sum = 0;  // over its samples
  int64_t samples = 0;
  double wall_ms = 0;  // its wall time
  double bytes = 0;    // on the wire for it (0 where nothing travels)
};

struct StepPoint {
  int64_t step = 0;     // the last step it covers
  int64_t steps = 0;    // how many it covers
  double seconds = 0;   // since training began, at its last step
  double loss = 0;      // mean over its samples
  int64_t samples = 0;  // in all
  double step_ms = 0;   // mean wall time per step
  double bytes_per_step = 0;
  double span_seconds = 0;  // wall time it covers: samples / span is the rate
  // Each worker's batch (hub) or the batch (standalone) at its last step:
  // set by the caller when Add says the point closed.
  std::vector<std::pair<std::string, int>> batches;
};

class StepHistory {
 public:
  explicit StepHistory(size_t max_points = 500);

  // Adds a finished step (or round); returns the point it closed, for the
  // caller to add what is costly to gather (batches), else null.
  StepPoint* Add(const StepSample& s);

  const std::vector<StepPoint>& points() const { return points_; }
  int64_t stride() const { return stride_; }
  // {"stride": N, "points": [{step, steps, seconds, loss, step_ms, ...}]}
  ReportJson ToJson() const;

 private:
  // Merges points pairwise (the last one alone if odd) and doubles the stride.
  void Halve();
  static void Merge(StepPoint& into, const StepPoint& later);

  size_t max_points_;
  int64_t stride_ = 1;
  std::vector<StepPoint> points_;
  // The steps added since the last point closed.
  StepPoint pending_;
  double pending_loss_sum_ = 0, pending_ms_sum_ = 0, pending_bytes_sum_ = 0;
  double last_seconds_ = 0;  // of the previous step: where the pending span begins
  bool started_ = false;     // a step was added
};

}  // namespace mt
