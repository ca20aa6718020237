// A round's plan: how many local steps it holds, who takes part
// (hub/policy/attendance.h), who computes which samples
// (hub/policy/batch_controller.h), and the plan sent out with the previous
// round's result. Not thread-safe: the step coordinator calls it under its
// lock (or, for Publish, where only its thread changes assignments).
#pragma once

#include <cstdint>
#include <vector>

#include "hub/coordinator/round_context.h"
#include "hub/policy/attendance.h"
#include "hub/policy/short_rounds.h"

namespace mt {

class RoundPlanner {
 public:
  RoundPlanner(RoundContext& round, Attendance& attendance) : r_(round), attendance_(attendance) {}

  // Steps in the round starting at the current step: up to --sync-every,
  // ending at the epoch's end, before its shorter last step, and where a
  // checkpoint is due (evaluations wait for the round's end).
  int64_t Length() const;
  // Of the workers present, those that take part in the next round: all,
  // but a device that would make the round slower than it is without it,
  // where the workers share one data order (balanced batches, no partition)
  // and no `secure_aggregation` fixes the members.
  std::vector<WorkerSlot*> Attend(std::vector<WorkerSlot*> present, bool secure_aggregation);
  // The round at the state's step begins with `who`: its length, encoding
  // and kind in the state, each participant's assignment, and who gets
  // the full state.
  void Begin(const std::vector<WorkerSlot*>& who);
  // One plan and, `with_result`, the previous round's last result segment
  // (`last_segment`; the others went out as they were averaged), or the
  // full state to whoever needs it: encoded once, sent to every
  // participant as the same bytes.
  void Publish(const std::vector<WorkerSlot*>& who, bool with_result, size_t last_segment);

 private:
  void Assign(const std::vector<WorkerSlot*>& who);
  // Each worker's batch and local steps: the balanced `batches` for
  // `steps`, or a short round for a device the split cannot slow down
  // enough (hub/policy/short_rounds.h).
  std::vector<RoundShare> Shares(const std::vector<WorkerSlot*>& who,
                                 const std::vector<int>& batches, int steps, int min_batch) const;
  void RecordBatchChange(const std::vector<WorkerSlot*>& who, const std::vector<int>& batches);

  RoundContext& r_;
  Attendance& attendance_;
};

}  // namespace mt
