// Rounds of unequal length for a device the batch split cannot slow down
// enough. The balanced split (hub/policy/batch_controller.h) makes every
// worker's round take as long as the others' by shrinking its batch; local
// steps take no fewer than BatchController::kMinLocalBatch samples, so a
// device more than ~8x slower than its partners sits at that floor and its
// round outlasts theirs: beside two 1x phones, a 10x one at 8 samples held
// every round 25% longer (the 1x ones take 64). Such a device takes fewer
// local steps instead (FedNova's setting, Wang et al. 2020): as many of
// its floor-sized steps as fit in the others' round, at least one; the
// samples it leaves go to the fastest worker, so the round still trains
// the plan's samples. Where the devices are measured alike, or all at the
// floor, nothing changes. Attendance (hub/policy/attendance.h) still sets
// aside a device whose one step outlasts the others' round by far.
//
// A worker that takes `steps` of `batch` samples trains batch * steps; the
// samples moved keep the round's total a whole number of steps of the
// others: each short worker's batch * steps is a multiple of the round's
// steps (its batch rounded up by less than the round's steps to make it).
// Pure: the coordinator's planner (hub/coordinator/round_planner.h) lays
// the samples out.
#pragma once

#include <vector>

namespace mt {

struct RoundShare {
  int batch = 0;  // samples a local step
  int steps = 0;  // local steps this round
};

struct ShortRoundInputs {
  std::vector<int> batches;           // the balanced split's, per step
  std::vector<int> caps;              // each worker's memory cap (samples a step)
  std::vector<double> ms_per_sample;  // the running estimates (< 0: not measured)
  std::vector<double> overhead_ms;    // of one exchange
  int steps = 1;                      // the round's
  int min_batch = 1;                  // the floor local steps take
};

// A round whose predicted time is within this share of the others' is left
// alone: the estimates move by more than that between rounds.
constexpr double kShortRoundSlack = 0.1;

// Each worker's batch and steps for the round; every worker keeps
// `steps` unless it sits at the floor and would outlast the others.
std::vector<RoundShare> ShortenSlowRounds(const ShortRoundInputs& in);

}  // namespace mt
