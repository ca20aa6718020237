// The fastest a worker can plausibly train a model: its arithmetic per
// sample (forward and backward, core/profile/layer_flops.h) on a device far
// faster than any a worker runs. A compute hint below it is a lie or a
// broken clock, never a device (BatchController::Hint).
#pragma once

#include "core/model/model.h"
#include "model.pb.h"

namespace mt {

// 1 PFLOP/s: about 15 times a data-centre GPU's float32 rate, and
// thousands of times a phone's.
constexpr double kFastestDeviceFlopsPerSecond = 1e15;

// Milliseconds per training sample at that rate; 0 when the model's
// arithmetic cannot be counted (no floor then).
double FastestPlausibleMsPerSample(const proto::ModelSpec& spec, const Model& model);

}  // namespace mt
