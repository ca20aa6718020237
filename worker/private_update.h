// Differential privacy on the worker (JoinReply.privacy): its update is
// clipped, and where the workers add the noise it gets its share, before
// any of it leaves. Streaming segments during the backward pass would send
// values before the whole update's norm is known, so a private step sends
// only once its gradient is complete.
#pragma once

#include <cstddef>

#include "core/privacy/dp_noise.h"
#include "hub.pb.h"

namespace mt {

class PrivateUpdate {
 public:
  explicit PrivateUpdate(const proto::DifferentialPrivacy& settings) : settings_(settings) {}

  bool enabled() const { return settings_.clip() > 0; }
  // Clips v[0, n) to the hub's norm and adds this worker's noise share;
  // returns the norm before clipping.
  double Apply(float* v, size_t n);

 private:
  proto::DifferentialPrivacy settings_;
  dp::GaussianNoise noise_;  // the CSPRNG
};

}  // namespace mt
