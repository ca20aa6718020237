// Differential privacy at the hub: the Gaussian noise on the combined
// update and the accountant that counts what the run has spent. Every
// worker clips its own update (worker/private_update.h); with central DP
// (DpNoiseAt::kHub) the hub adds N(0, (sigma * clip * w)^2) to each
// combined weight, w being the largest weight a worker had in the
// combination (1 / n with equal batches): the noise on the sum of clipped
// updates, scaled as the sum is. The noise goes in before the segment is
// applied or encoded, so the master and every worker take the same noised
// average and agree bit for bit at the digests.
//
// Not thread-safe but for rounds() and epsilon(): the coordinator calls
// OnCombined under its lock; the live views read the count.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/privacy/dp_accountant.h"
#include "core/privacy/dp_noise.h"
#include "core/privacy/dp_settings.h"
#include "hub.pb.h"

namespace mt {

class DpAggregate {
 public:
  // `s`: the noise multiplier resolved (core/privacy/dp_plan.h); `workers`:
  // how many share the noise when the workers add it.
  DpAggregate(const DpSettings& s, int workers);

  bool enabled() const { return settings_.enabled(); }
  const DpSettings& settings() const { return settings_; }

  // A combined segment: noised here under central DP. `first`: the round's
  // first segment, which counts the round as released (a round combined
  // again after a refusal counts again: never fewer than were released).
  void OnCombined(float* values, size_t n, double max_weight, bool first);

  // Rounds released before this process (a resumed run): every step of
  // them counts, never fewer than were released.
  void CountEarlierRounds(int64_t n) {
    if (enabled()) rounds_.fetch_add(n, std::memory_order_relaxed);
  }

  // What each worker is told at Join.
  proto::DifferentialPrivacy ForWorkers() const;

  int64_t rounds() const { return rounds_.load(std::memory_order_relaxed); }
  // Spent so far, at the settings' delta.
  double epsilon() const;

 private:
  DpSettings settings_;
  int workers_;
  dp::Accountant accountant_;
  dp::GaussianNoise noise_;
  std::atomic<int64_t> rounds_{0};
};

}  // namespace mt
