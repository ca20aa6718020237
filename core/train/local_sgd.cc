#include "core/train/local_sgd.h"

#include <cmath>

namespace mt::local_sgd {

void RoundChange(const float* now, const float* start, size_t n, float* change) {
  for (size_t i = 0; i < n; ++i) change[i] = now[i] - start[i];
}

void AddChange(float* weights, const float* change, size_t n) {
  for (size_t i = 0; i < n; ++i) weights[i] += change[i];
}

void MoveOnto(const float* anchor, const float* now, const float* sent, size_t n, float* out) {
  for (size_t i = 0; i < n; ++i) out[i] = anchor[i] + (now[i] - sent[i]);
}

void AddProximal(float* grad, const float* now, const float* start, size_t n, float mu) {
  for (size_t i = 0; i < n; ++i) grad[i] += mu * (now[i] - start[i]);
}

void UpdateDrift(float* drift, const float* average, const float* own, size_t n, int steps) {
  const float per_step = 1.0f / static_cast<float>(steps > 0 ? steps : 1);
  for (size_t i = 0; i < n; ++i) drift[i] += (average[i] - own[i]) * per_step;
}

bool OuterStep(float* change, float* velocity, size_t n, float lr, float m) {
  // Checked before anything changes, so the caller can refuse a worker and
  // average again without it.
  for (size_t i = 0; i < n; ++i) {
    const float v = m == 0 ? change[i] : m * velocity[i] + change[i];
    if (!std::isfinite(v) || !std::isfinite(lr * v)) return false;
  }
  if (m == 0) {
    for (size_t i = 0; i < n; ++i) change[i] *= lr;
    return true;
  }
  for (size_t i = 0; i < n; ++i) {
    velocity[i] = m * velocity[i] + change[i];
    change[i] = lr * velocity[i];
  }
  return true;
}

}  // namespace mt::local_sgd
