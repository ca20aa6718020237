// The elementwise activations of one backend op family
// (Backend::ActivationForward/Backward): a new activation is a value here
// and its formula, and every backend that implements the family's ops runs
// it (the CPU backend through these very functions).
#pragma once

#include <cmath>
#include <cstdint>

namespace mt::kernels {

enum class Activation : uint8_t {
  kSigmoid,      // 1 / (1 + exp(-x))
  kTanh,         // tanh(x)
  kHardSigmoid,  // clamp(alpha x + beta, 0, 1)
  kHardSwish,    // x * clamp(x / 6 + 1/2, 0, 1)
  kLeakyRelu,    // x if x >= 0, else alpha x
  kSilu,         // x * sigmoid(x)
};

// The function's constants (HardSigmoid's slope and offset, LeakyReLU's slope).
struct ActivationParams {
  float alpha = 0.0f;
  float beta = 0.0f;
};

constexpr const char* ActivationName(Activation f) {
  switch (f) {
    case Activation::kSigmoid: return "sigmoid";
    case Activation::kTanh: return "tanh";
    case Activation::kHardSigmoid: return "hard_sigmoid";
    case Activation::kHardSwish: return "hard_swish";
    case Activation::kLeakyRelu: return "leaky_relu";
    case Activation::kSilu: return "silu";
  }
  return "?";
}

inline float Sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

inline float Activate(Activation f, const ActivationParams& p, float x) {
  switch (f) {
    case Activation::kSigmoid: return Sigmoid(x);
    case Activation::kTanh: return std::tanh(x);
    case Activation::kHardSigmoid: return std::fmin(1.0f, std::fmax(0.0f, p.alpha * x + p.beta));
    case Activation::kHardSwish:
      return x * std::fmin(1.0f, std::fmax(0.0f, x * (1.0f / 6.0f) + 0.5f));
    case Activation::kLeakyRelu: return x >= 0.0f ? x : p.alpha * x;
    case Activation::kSilu: return x * Sigmoid(x);
  }
  return x;
}

// d activation / dx at x: the backward pass reads the input.
inline float ActivationSlope(Activation f, const ActivationParams& p, float x) {
  switch (f) {
    case Activation::kSigmoid: {
      const float s = Sigmoid(x);
      return s * (1.0f - s);
    }
    case Activation::kTanh: {
      const float t = std::tanh(x);
      return 1.0f - t * t;
    }
    case Activation::kHardSigmoid: {
      const float z = p.alpha * x + p.beta;
      return z > 0.0f && z < 1.0f ? p.alpha : 0.0f;
    }
    case Activation::kHardSwish:
      return x < -3.0f ? 0.0f : x > 3.0f ? 1.0f : x * (1.0f / 3.0f) + 0.5f;
    case Activation::kLeakyRelu: return x >= 0.0f ? 1.0f : p.alpha;
    case Activation::kSilu: {
      const float s = Sigmoid(x);
      return s * (1.0f + x * (1.0f - s));
    }
  }
  return 1.0f;
}

}  // namespace mt::kernels
