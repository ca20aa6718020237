#include "core/privacy/dp_plan.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "core/privacy/dp_accountant.h"

namespace mt::dp {
namespace {

std::string Number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", x);
  return buf;
}

}  // namespace

int64_t PlannedRounds(const RunPlan& plan, int sync_every, int64_t checkpoint_every) {
  const int64_t steps = plan.total_steps();
  if (sync_every <= 1) return steps;
  const int64_t cuts =
      plan.epochs() + (checkpoint_every > 0 ? steps / checkpoint_every : int64_t{0});
  return std::min(steps, (steps + sync_every - 1) / sync_every + cuts);
}

void SolveNoise(DpSettings& s, int64_t rounds) {
  if (!s.enabled() || s.target_epsilon <= 0) return;
  const double sigma = NoiseForEpsilon(1, rounds, s.target_epsilon, s.delta, kMaxNoiseMultiplier);
  if (sigma > 0) {
    s.noise_multiplier = sigma;
    return;
  }
  throw TargetError("--dp-epsilon " + Number(s.target_epsilon) + " cannot be met in this run's " +
                    std::to_string(rounds) + " rounds at --dp-delta " + Number(s.delta) +
                    ": the smallest it can meet is " +
                    Number(Epsilon(1, kMaxNoiseMultiplier, rounds, s.delta)) +
                    " (noise multiplier " + Number(kMaxNoiseMultiplier) +
                    ", beyond which nothing is learnt); fewer rounds (--epochs, --steps, "
                    "--sync-every) spend less");
}

}  // namespace mt::dp
