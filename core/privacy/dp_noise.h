// Gaussian noise for differential privacy. By default every draw comes from
// OpenSSL's CSPRNG (RAND_bytes): noise an observer could predict from a
// seed, or from earlier draws of a fast generator's state, protects
// nothing. Tests that need the same noise twice ask for a seeded generator.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/util/rng.h"

namespace mt::dp {

class GaussianNoise {
 public:
  // Unpredictable: OpenSSL's CSPRNG.
  GaussianNoise() = default;
  // Reproducible, for tests only.
  explicit GaussianNoise(uint64_t seed) : seeded_(Rng(seed)) {}

  // v[i] += N(0, stddev^2) for i in [0, n). Allocates only when n grows
  // beyond every call before (a steady step allocates nothing). Throws
  // std::runtime_error when the CSPRNG fails.
  void Add(float* v, size_t n, double stddev);

 private:
  // 2 * ceil(n / 2) uniform words, 64 bits each.
  void FillWords(size_t count);

  std::optional<Rng> seeded_;
  std::vector<uint64_t> words_;
};

}  // namespace mt::dp
