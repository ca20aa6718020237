// A private run's budget, planned before its first step: how many rounds
// can release an update, and the noise that keeps them within --dp-epsilon.
#pragma once

#include <cstdint>

#include "core/privacy/dp_settings.h"
#include "core/train/run_plan.h"

namespace mt::dp {

// A --dp-epsilon the run's length cannot meet: a command-line mistake
// (exit 2), known once the data's size is.
struct TargetError : RunLengthError {
  using RunLengthError::RunLengthError;
};

// The most rounds `plan` can release: every step at H 1 or with H chosen
// as the run goes (0, auto: it may stay 1); with a fixed H above 1 a round
// per H steps, plus one cut short at every epoch end and checkpoint
// (`checkpoint_every`: 0 when the run keeps none).
int64_t PlannedRounds(const RunPlan& plan, int sync_every, int64_t checkpoint_every);

// Sets s.noise_multiplier from s.target_epsilon over `rounds` rounds of
// the unsampled Gaussian (every worker takes part in every round); throws
// TargetError naming the smallest epsilon the run can meet. Does nothing
// when the noise was given.
void SolveNoise(DpSettings& s, int64_t rounds);

}  // namespace mt::dp
