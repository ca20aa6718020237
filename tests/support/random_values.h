// Seeded normal values for the codec tests: the same seed gives the same
// vector on every run and machine this build runs on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace mt::test_support {

inline std::vector<float> RandomNormal(size_t n, uint32_t seed, float sigma = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, sigma);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

}  // namespace mt::test_support
