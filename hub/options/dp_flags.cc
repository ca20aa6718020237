#include "hub/options/dp_flags.h"

#include "core/cli/command_line.h"
#include "core/cli/validators.h"
#include "core/privacy/dp_accountant.h"

namespace mt {

void AddDpFlags(CLI::App& app, DpSettings& dp) {
  cli::Section(app, "Differential privacy");
  app.add_option("--dp-clip", dp.clip,
                 "differential privacy: every worker clips its update (its gradient at "
                 "--sync-every 1, its round's weight change above) to this L2 norm before it "
                 "leaves, and Gaussian noise of standard deviation --dp-noise times the clip is "
                 "added to the workers' sum. Without secure aggregation the hub adds it (central "
                 "DP: the hub itself sees clipped updates without noise). The privacy unit is one "
                 "worker's update in a round; epsilon is in the report, /api/status, /metrics, "
                 "the dashboard and the exported model (docs/security.md). 0: off")
      ->check(cli::Real(0, 1e6));
  app.add_option("--dp-noise", dp.noise_multiplier,
                 "differential privacy: the noise multiplier sigma (standard deviation of the "
                 "noise on the sum over --dp-clip)")
      ->check(cli::Real(0, dp::kMaxNoiseMultiplier));
  app.add_option("--dp-epsilon", dp.target_epsilon,
                 "differential privacy: the epsilon the whole run may spend at --dp-delta; the "
                 "hub solves for the noise over the run's rounds (Renyi DP accountant) and "
                 "refuses a target the run's length cannot meet, naming the smallest it can")
      ->check(cli::Real(1e-3, 1e6));
  app.add_option("--dp-delta", dp.delta, "differential privacy: the delta epsilon is stated at")
      ->check(cli::Real(1e-12, 0.1))
      ->default_str("1e-05");
}

void CheckDpFlags(const CLI::App& app, const HubConfig& cfg) {
  const DpSettings& dp = cfg.dp;
  const bool noise = app.count("--dp-noise") > 0, target = app.count("--dp-epsilon") > 0;
  if (!dp.enabled()) {
    if (noise || target || app.count("--dp-delta") > 0)
      throw cli::UsageError("--dp-noise, --dp-epsilon and --dp-delta need --dp-clip");
    return;
  }
  if (noise == target)
    throw cli::UsageError(
        "--dp-clip needs one of --dp-noise (the noise multiplier) or --dp-epsilon (the "
        "budget the noise is solved for)");
  if (cfg.compression && *cfg.compression != Compression::kNone)
    throw cli::UsageError(
        "--dp-clip exchanges updates uncompressed (a lossy encoding's error feedback would send "
        "what clipping removed in later rounds): drop --compress or give none");
  if (cfg.aggregate == Aggregation::kTrimmedMean || cfg.aggregate == Aggregation::kMedian)
    throw cli::UsageError(
        "--dp-clip bounds each worker's weight in a weighted mean; --aggregate trimmed-mean and "
        "median are not means (give auto or mean)");
}

}  // namespace mt
