// Pearson's chi-square statistic of bytes against the uniform distribution
// over 256 values, and the statistic's bound at p = 1e-6 for 255 degrees of
// freedom (Wilson-Hilferty): bytes indistinguishable from random stay below
// it in all but one run in a million.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace mt::test_support {

constexpr double kChiSquare255AtOneInAMillion = 377.0;

inline double ChiSquareOfBytes(const void* data, size_t bytes) {
  std::array<size_t, 256> counts{};
  const auto* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < bytes; ++i) ++counts[p[i]];
  const double expected = static_cast<double>(bytes) / 256.0;
  double chi = 0.0;
  for (size_t c : counts) {
    const double d = static_cast<double>(c) - expected;
    chi += d * d / expected;
  }
  return chi;
}

}  // namespace mt::test_support
