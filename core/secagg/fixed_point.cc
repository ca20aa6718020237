#include "core/secagg/fixed_point.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace mt::secagg {

double FixedPoint::Scale() const { return std::ldexp(1.0, 30) / static_cast<double>(clip); }

void FixedPoint::Encode(const float* x, size_t n, double weight, uint32_t* out) const {
  if (!(weight >= 0.0 && weight <= 1.0))
    throw std::invalid_argument("secagg: weight not in [0, 1]");
  const double c = clip;
  const double factor = weight * Scale();
  for (size_t k = 0; k < n; ++k) {
    // NaN clamps to -clip: a masked vector cannot carry a non-finite value.
    const double v = std::isnan(x[k]) ? -c : std::clamp(static_cast<double>(x[k]), -c, c);
    const auto q = static_cast<int64_t>(std::llround(v * factor));
    out[k] = static_cast<uint32_t>(q);  // two's complement, modulo 2^32
  }
}

void FixedPoint::Decode(const uint32_t* sum, size_t n, double total_weight, float* out) const {
  if (!(total_weight > 0.0)) throw std::invalid_argument("secagg: no weight to decode by");
  const double factor = 1.0 / (Scale() * total_weight);
  for (size_t k = 0; k < n; ++k) {
    out[k] = static_cast<float>(static_cast<double>(static_cast<int32_t>(sum[k])) * factor);
  }
}

void AddInRing(uint32_t* a, const uint32_t* b, size_t n, bool subtract) {
  if (subtract) {
    for (size_t k = 0; k < n; ++k) a[k] -= b[k];
  } else {
    for (size_t k = 0; k < n; ++k) a[k] += b[k];
  }
}

}  // namespace mt::secagg
