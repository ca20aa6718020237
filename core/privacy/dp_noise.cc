#include "core/privacy/dp_noise.h"

#include <openssl/rand.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace mt::dp {
namespace {

constexpr double kTwoPi = 6.283185307179586476925286766559;

// Uniform in (0, 1]: 53 random bits, never 0 (Box-Muller takes its log).
double UnitOpen(uint64_t w) { return (static_cast<double>(w >> 11) + 1.0) * 0x1.0p-53; }

}  // namespace

void GaussianNoise::FillWords(size_t count) {
  if (words_.size() < count) words_.resize(count);
  if (seeded_) {
    for (size_t i = 0; i < count; ++i) words_[i] = seeded_->Next();
    return;
  }
  // RAND_bytes takes an int count: fill in pieces well below its limit.
  constexpr size_t kPiece = size_t{1} << 26;
  auto* bytes = reinterpret_cast<unsigned char*>(words_.data());
  for (size_t done = 0, total = count * sizeof(uint64_t); done < total; done += kPiece) {
    const size_t n = std::min(kPiece, total - done);
    if (RAND_bytes(bytes + done, static_cast<int>(n)) != 1)
      throw std::runtime_error("the system's random generator failed (OpenSSL RAND_bytes)");
  }
}

void GaussianNoise::Add(float* v, size_t n, double stddev) {
  if (n == 0 || stddev <= 0) return;
  const size_t pairs = (n + 1) / 2;
  FillWords(2 * pairs);
  // Box-Muller: two independent standard normals per pair of uniforms.
  for (size_t k = 0; k < pairs; ++k) {
    const double r = stddev * std::sqrt(-2.0 * std::log(UnitOpen(words_[2 * k])));
    const double a = kTwoPi * UnitOpen(words_[2 * k + 1]);
    v[2 * k] += static_cast<float>(r * std::cos(a));
    if (2 * k + 1 < n) v[2 * k + 1] += static_cast<float>(r * std::sin(a));
  }
}

}  // namespace mt::dp
