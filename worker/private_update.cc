#include "worker/private_update.h"

#include "core/privacy/dp_clip.h"

namespace mt {

double PrivateUpdate::Apply(float* v, size_t n) {
  if (!enabled()) return 0;
  const double norm = dp::ClipToNorm(v, n, settings_.clip());
  noise_.Add(v, n, settings_.noise_stddev());
  return norm;
}

}  // namespace mt
