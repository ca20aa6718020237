#include "hub/policy/plausible_speed.h"

#include <exception>
#include <numeric>

#include "core/profile/layer_flops.h"

namespace mt {

double FastestPlausibleMsPerSample(const proto::ModelSpec& spec, const Model& model) {
  try {
    const std::vector<int64_t> forward = ForwardFlopsPerSample(spec, model);
    const std::vector<int64_t> backward = BackwardFlopsPerSample(model, forward);
    const double flops = std::accumulate(forward.begin(), forward.end(), 0.0) +
                         std::accumulate(backward.begin(), backward.end(), 0.0);
    return 1e3 * flops / kFastestDeviceFlopsPerSecond;
  } catch (const std::exception&) {
    return 0;  // a layer that states no FLOPs: no floor rather than a wrong one
  }
}

}  // namespace mt
