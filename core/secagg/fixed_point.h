#pragma once
// The ring secure aggregation sums in: each float becomes a uint32 (two's
// complement of round(x * scale)), added modulo 2^32, so random masks hide
// every value completely and cancel exactly.
//
// Why it cannot wrap: a worker clips each value of its update to
// [-clip, clip] and multiplies it by its weight w_i (its share of the
// round's samples, the w_i of the round summing to 1), so the true sum of
// any set of workers lies in [-clip, clip]. With scale = 2^30 / clip that is
// at most 2^30 in the ring, plus one half step of rounding per worker: below
// 2^31, the signed range, for any number of workers under 2^31. Partial sums
// may wrap; only the final sum needs to fit, and modular addition is exact.
//
// Why these numbers: clip 16 (a power of two, so the scale is one too and
// the encoding is exact in binary) is far above what a gradient or a
// round's change of one weight reaches in the presets (below 1; a value
// beyond 16 is a diverging run anyway), and leaves a step of
// 16 / 2^30 = 1.5e-8, finer than float's own rounding of a weight near 1
// (6e-8). uint32 costs exactly the bytes of a float, so masking adds no
// bytes to an uncompressed update.
#include <cstddef>
#include <cstdint>

namespace mt::secagg {

struct FixedPoint {
  float clip = 16.0F;  // a power of two
  double Scale() const;
  double Step() const { return 1.0 / Scale(); }

  // out[k] = round(clamp(x[k], -clip, clip) * weight * scale) mod 2^32.
  void Encode(const float* x, size_t n, double weight, uint32_t* out) const;
  // A sum of encodings back to floats, divided by `total_weight` (the
  // weights of the workers in the sum; 1 when all of them are).
  void Decode(const uint32_t* sum, size_t n, double total_weight, float* out) const;
};

// a[k] += b[k] (mod 2^32); a[k] -= b[k] with `subtract`.
void AddInRing(uint32_t* a, const uint32_t* b, size_t n, bool subtract = false);

}  // namespace mt::secagg
