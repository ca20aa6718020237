#include "core/privacy/dp_clip.h"

#include <algorithm>
#include <cmath>

namespace mt::dp {

double L2Norm(const float* v, size_t n) {
  double sum = 0;
  for (size_t i = 0; i < n; ++i) sum += static_cast<double>(v[i]) * v[i];
  return std::sqrt(sum);
}

double ClipToNorm(float* v, size_t n, double clip) {
  const double norm = L2Norm(v, n);
  if (!std::isfinite(norm)) {
    std::fill(v, v + n, 0.0f);
    return norm;
  }
  if (norm <= clip) return norm;
  // A scale a little short of clip / norm keeps the float products'
  // rounding (half a unit each, 6e-8 relative) inside the bound.
  const auto scale = static_cast<float>(clip / norm * (1 - 1e-6));
  for (size_t i = 0; i < n; ++i) v[i] *= scale;
  return norm;
}

}  // namespace mt::dp
