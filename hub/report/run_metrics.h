// What the hub measures over a run, for its report: its own CPU and wall
// time per kind of work, bytes on the wire and batch changes.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/compress/gradient_codec.h"
#include "core/train/run_summary.h"
#include "hub/evaluation/model_health.h"

namespace mt {

struct BatchChange {
  int64_t step = 0;
  std::vector<std::pair<std::string, int>> batches;  // name, batch
};

// --sync-every auto chose another number of local steps per round.
struct SyncChange {
  int64_t step = 0;  // steps done when it changed
  int from = 1, to = 1;
  double exchange_ms = 0;      // the estimates it decided on: a round's exchange
  double step_compute_ms = 0;  // and one step's compute
};

// --compress auto chose another encoding.
struct CompressionChange {
  int64_t step = 0;  // steps done when it changed
  Compression from = Compression::kNone, to = Compression::kNone;
  double exchange_ms = 0;  // a round's exchange at `from`
  double budget_ms = 0;    // what a round's exchange may take
};

struct RunMetrics {
  // The hub's own work per step, barrier waits and evaluation excluded.
  double reduce_seconds = 0;             // averaging and the optimizer step
  double broadcast_seconds = 0;          // preparing the result and queueing it
  std::atomic<int64_t> write_cpu_ns{0};  // starting writes off the step loop's thread
  double wall_seconds = 0;               // the same work in wall time
  double eval_seconds = 0;               // CPU spent evaluating (kept out of the shares)
  double process_seconds = 0;  // the whole process's CPU in the step loop, evaluation excluded
  int64_t samples = 0;
  // Gradient payload bytes (values or packed) in from workers and out in
  // step results, headers excluded: what --compress changes.
  int64_t gradient_bytes_in = 0;
  std::atomic<int64_t> result_bytes_out{0};  // also counted by the transport's threads
  // Contributions refused by the aggregation (hub/aggregation/robust_aggregate.h),
  // each dropping its worker, and steps run again because of one.
  int64_t refused_contributions = 0;
  int64_t steps_refused = 0;
  // --secure-aggregation: rounds unmasked, and members dropped from them
  // whose masks the survivors' shares removed.
  int64_t secure_rounds = 0;
  int64_t secure_dropped_recovered = 0;
  // Joins refused because their identity was dropped so (hub/membership/identity_bans.h).
  int64_t refused_rejoins = 0;
  // Workers set aside for making the rounds slower (hub/policy/attendance.h).
  int64_t set_asides = 0;
  // For the end-of-run check (hub/evaluation/model_health.h).
  TrainLossTrend train_loss;

  static constexpr size_t kMaxBatchChanges = 1000;
  std::vector<BatchChange> batch_changes;  // the first kMaxBatchChanges
  int64_t batch_change_count = 0;

  static constexpr size_t kMaxSyncChanges = 1000;
  std::vector<SyncChange> sync_changes;                // the first kMaxSyncChanges
  std::vector<CompressionChange> compression_changes;  // the first kMaxSyncChanges
};

}  // namespace mt
