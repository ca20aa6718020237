// How a run's steps are made and its weights exchanged: the strategy the
// training loop (core/train/training_loop.h) runs its steps through. The
// loop owns the schedule around the steps (evaluation, early stopping,
// checkpoints, history, summary); the exchange owns the step itself.
//
//   none          mtworker --standalone: the step runs here, in Complete
//   every step    mthub --sync-every 1: workers compute, the hub averages
//   rounds of H   mthub --sync-every H|auto: local SGD, changes averaged
//   look-ahead    mthub --overlap: rounds overlapping their exchange
//
// Pure: no transport, no threads of its own; the hub's adapter over its
// StepCoordinator lives in hub/.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace mt {

enum class ExchangeKind { kNone, kEveryStep, kRounds, kRoundsLookAhead };
const char* ExchangeKindName(ExchangeKind kind);

// What one step (or local-SGD round) did.
struct StepOutcome {
  bool stopped = false;  // stopped before it was applied; the run ends
  int64_t steps = 1;     // steps it covered (a round covers several)
  int64_t samples = 0;   // in it; 0: nobody finished, the step runs again
  double loss_sum = 0;   // over its samples
};

class StepExchange {
 public:
  virtual ~StepExchange() = default;

  virtual ExchangeKind kind() const = 0;
  // Starts the next step; false when the run was stopped before it could.
  virtual bool Begin() = 0;
  // Steps applied to the weights, counting those before a resume.
  virtual int64_t steps_done() const = 0;
  // After Begin: whether the weights are those of steps_done() steps, so
  // the loop may evaluate or save them now.
  virtual bool WeightsCurrent() const = 0;
  // After Begin: whether the step goes on without the loop (workers
  // compute it), so the loop's own work now overlaps it, and it has to be
  // completed even when the run is to end. False: it runs in Complete.
  virtual bool StepInFlight() const = 0;
  // The loop spent `d` on its own work while the step was in flight: not
  // the workers' time to be charged for (a deadline may move).
  virtual void Overlapped(std::chrono::steady_clock::duration /*d*/) {}
  // Completes the begun step. `more_may_follow`: the run goes on after it.
  virtual StepOutcome Complete(bool more_may_follow) = 0;

  // Once the steps are over: why the run failed ("" if it did not, e.g.
  // the weights diverged), and why it was stopped from outside ("" if it
  // was not, e.g. a signal).
  virtual std::string Failure() const = 0;
  virtual std::string StopReason() const = 0;
};

}  // namespace mt
