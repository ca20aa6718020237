// The step (or round of --sync-every local steps) in progress and the
// result the master holds, as plain data: which step, how long the round
// is, whether the workers have had the master's last average, and the
// count of non-finite results that tells a diverged model. No messages, no
// threads, no clocks: the coordinator keeps it under its lock.
#pragma once

#include <cstdint>
#include <string>

namespace mt {

struct RoundState {
  // Set when the model has diverged: this many non-finite results for the
  // same step and nobody left in it.
  static constexpr int kDivergedAfter = 3;

  int64_t step = 0;               // steps done; the round in progress starts here
  int64_t steps = 1;              // of the round in progress
  bool local = false;             // whether it sends weight changes (local SGD)
  uint64_t digest_before = 0;     // master weights' digest when the step began
  bool published_result = false;  // its plan carried the previous round's result
  // Whether the master holds an applied average the workers have not had:
  // false at the start, after a step nobody finished, or when everyone left.
  bool have_result = false;
  // The round whose average the master holds, and its mean loss.
  int64_t average_step = -1, average_steps = 1;
  bool average_local = false;
  double mean_loss = 0;
  // Workers' results refused as non-finite since the last applied step.
  int non_finite_refusals = 0;
  std::string diverged;  // why the run stopped as diverged; empty: it did not

  // The round closed with `samples` samples of loss `loss_sum` in its
  // average, which the master now holds: the next round starts after it.
  void Close(int64_t samples, double loss_sum) {
    non_finite_refusals = 0;
    average_step = step;
    average_steps = steps;
    average_local = local;
    have_result = true;
    mean_loss = loss_sum / static_cast<double>(samples);
    step += steps;
  }
  // A result was refused as non-finite; `others_in_step`: participants of
  // the step still in it besides the refused one. Returns true when that
  // makes the model diverged (once): every worker that tries the step fails
  // the same way, so the weights they all start from are what is broken.
  // While a worker is still in the step the fault is the refused ones':
  // one attacker's many sessions, each with a NaN, are dropped and the
  // step goes on with the others.
  bool NoteNonFinite(const std::string& why, int others_in_step) {
    ++non_finite_refusals;
    if (others_in_step > 0 || non_finite_refusals < kDivergedAfter || !diverged.empty())
      return false;
    diverged = "the model diverged at step " + std::to_string(step + 1) + ": " +
               std::to_string(non_finite_refusals) +
               " results in a row were not finite, none was (last: " + why +
               "); lower --lr, or --resume from an earlier checkpoint";
    return true;
  }
};

}  // namespace mt
