// The dropout mask is a pure function of (seed, element index), so the CPU and
// OpenCL backends draw identical masks and a run is reproducible from its seed.
// The OpenCL kernel source repeats this arithmetic; keep them in step.
#pragma once

#include <cstdint>

namespace mt::kernels {

// splitmix64 finaliser: a good 64-bit mix with no state.
inline uint64_t MixBits(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform in [0, 1) from the top 24 bits.
inline float UniformAt(uint64_t seed, uint64_t index) {
  return static_cast<float>(MixBits(seed ^ MixBits(index)) >> 40) * (1.0f / 16777216.0f);
}

inline bool KeepAt(uint64_t seed, uint64_t index, float rate) {
  return UniformAt(seed, index) >= rate;
}

}  // namespace mt::kernels
