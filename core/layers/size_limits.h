// Bounds on what a model spec may ask for, checked in 64-bit arithmetic
// before anything is allocated. A spec can come from a file, a hub or (later)
// an ONNX graph, any of them hostile: without these, a dense layer of 2^24
// units over 2^24 inputs overflowed the int sizes (UB), and absurd sizes
// ended in a bare std::bad_alloc after gigabytes. The limits are far above
// any model meant for a phone (MobileNetV2: 3.5M parameters).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace mt {

// One layer's output per sample, weights, or workspace per sample.
constexpr int64_t kMaxLayerElements = int64_t{1} << 28;
// A whole model's parameters (256 MB of floats, twice: weights and grads).
constexpr int64_t kMaxModelParams = int64_t{1} << 26;
// Window sizes, strides, paddings.
constexpr int kMaxWindow = 1 << 12;

// a * b * ... for sizes already known to be positive and below 2^31,
// refusing (std::invalid_argument, naming `what`) a product beyond
// kMaxLayerElements; each step stays below 2^59, so nothing overflows.
inline int64_t CheckedElements(std::initializer_list<int64_t> factors, const std::string& what) {
  int64_t n = 1;
  for (const int64_t f : factors) {
    n *= f;
    if (n > kMaxLayerElements)
      throw std::invalid_argument(what + " would have more than 2^28 elements");
  }
  return n;
}

}  // namespace mt
