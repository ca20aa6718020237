// Scalars that every backend derives on the host before launching an op.
// Computing them in one place keeps the backends' results identical (the
// dropout scale, for one, makes the kept activations bit-equal).
#pragma once

#include <cmath>

#include "kernels/backend.h"

namespace mt::kernels {

// Inverted dropout's scale for the kept activations, 1 / (1 - rate). A rate
// of 1 or more drops everything; its scale is 0, since 1/0 would turn the
// dropped 0 * inf into NaN.
inline float DropoutScale(float rate) { return rate < 1.0f ? 1.0f / (1.0f - rate) : 0.0f; }

// The factor that turns summed per-sample gradients into the gradient of the
// mean loss over n samples (0 for an empty batch).
inline float MeanScale(int n) { return n > 0 ? 1.0f / static_cast<float>(n) : 0.0f; }

// Adam's bias corrections, in double on the host, in PyTorch's order of
// operations: p -= step_size * m / (sqrt(v) / c2_sqrt + eps), with
// step_size = lr / (1 - beta1^t) and c2_sqrt = sqrt(1 - beta2^t).
struct AdamCorrection {
  float step_size;
  float c2_sqrt;
};

inline AdamCorrection AdamBiasCorrection(const AdamHyper& h) {
  const double step = static_cast<double>(h.step < 1 ? 1 : h.step);
  return AdamCorrection{static_cast<float>(h.lr / (1.0 - std::pow(double{h.beta1}, step))),
                        static_cast<float>(std::sqrt(1.0 - std::pow(double{h.beta2}, step)))};
}

}  // namespace mt::kernels
