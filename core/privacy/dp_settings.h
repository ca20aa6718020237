// Differential privacy of a hub run (mthub --dp-clip/--dp-noise or
// --dp-epsilon): the plain settings the command line fills and the hub
// resolves before the first step. The privacy unit is one worker's update
// in a round (its gradient at H 1, its round's weight change above): each
// worker clips it to L2 norm `clip`, and Gaussian noise of standard
// deviation noise_multiplier * clip is added to the workers' sum
// (DP-FedAvg, McMahan et al. 2018).
#pragma once

namespace mt {

// Who adds the noise. Without secure aggregation the hub adds it to the sum
// (central DP: the hub sees clipped but noiseless updates); with it each
// worker adds its share, so no party sees a noiseless update.
enum class DpNoiseAt { kHub, kWorkers };

struct DpSettings {
  double clip = 0;              // 0: DP off
  double noise_multiplier = 0;  // sigma; solved from target_epsilon when that is set
  double target_epsilon = 0;    // --dp-epsilon; 0: sigma is given
  double delta = 1e-5;
  // Central unless secure aggregation hides the updates from the hub.
  DpNoiseAt noise_at = DpNoiseAt::kHub;
  bool enabled() const { return clip > 0; }
};

}  // namespace mt
