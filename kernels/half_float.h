// 16-bit floats by integer bit manipulation: IEEE half precision (fp16) and
// bfloat16 (bf16, a float's upper half), shared by the fp16 and low-rank
// encodings (core/compress/gradient_codec.cc, lowrank_codec.cc) and the
// 16-bit storage of saved activations (kernels/half_storage.h): every
// decoder of the same bytes must get bit-identical floats, whatever the
// hardware's own conversions do, on x86-64 and arm64 alike, and a
// vectorised loop over these must give what the scalar one gives (integer
// operations only, but for one exact multiply). Little-endian hosts (all mt
// targets).
#pragma once

#include <cstdint>
#include <cstring>

namespace mt::half_float {

inline uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

inline float BitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline constexpr uint32_t kHalfMaxAsFloat = 0x477FE000;  // 65504.0f

inline uint16_t FloatToHalf(float f) {
  const uint32_t x = FloatBits(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  uint32_t a = x & 0x7FFFFFFF;
  if (a > 0x7F800000) return sign | 0x7E00;      // NaN stays NaN
  if (a > kHalfMaxAsFloat) a = kHalfMaxAsFloat;  // clamp, never inf
  if (a >= 0x38800000) {                         // >= 2^-14: a normal half
    // Rebias the exponent and round the 13 dropped mantissa bits to nearest
    // even: adding 0xFFF plus the kept lowest bit carries exactly when the
    // dropped part is above half, or exactly half with an odd kept part.
    a += ((15u - 127u) << 23) + 0xFFF + ((a >> 13) & 1);
    return sign | static_cast<uint16_t>(a >> 13);
  }
  // A subnormal half counts units of 2^-24: shift the full 24-bit mantissa
  // right so that its lowest kept bit is worth 2^-24, rounding to even.
  const uint32_t e = a >> 23;
  if (e < 102) return sign;  // below 2^-25, which is half the smallest subnormal
  const uint32_t m = (a & 0x7FFFFF) | 0x800000;
  const uint32_t shift = 126 - e;  // 14..24
  const uint32_t kept = m >> shift, dropped = m & ((1u << shift) - 1), half = 1u << (shift - 1);
  const uint32_t up = dropped > half || (dropped == half && (kept & 1));
  return sign |
         static_cast<uint16_t>(kept + up);  // may carry into the smallest normal, as it should
}

// Finite halves only (DecodeFloats rejects the others). Both arms are exact,
// and both are computed and then picked by a mask: GCC keeps a ?: around a
// float multiply as a branch, which stops the decode loop vectorising.
inline float HalfToFloat(uint16_t h) {
  const uint32_t em = h & 0x7FFFu;
  const uint32_t normal = (em << 13) + ((127u - 15u) << 23);
  const uint32_t subnormal = FloatBits(static_cast<float>(static_cast<int32_t>(em)) * 0x1p-24f);
  const uint32_t is_subnormal = 0u - static_cast<uint32_t>(em < 0x400);
  const uint32_t bits = (subnormal & is_subnormal) | (normal & ~is_subnormal);
  return BitsFloat(bits | (static_cast<uint32_t>(h & 0x8000) << 16));
}

// bfloat16: a float's sign, its 8-bit exponent and its top 7 mantissa bits,
// rounded to nearest even (adding 0x7FFF plus the lowest kept bit carries
// exactly when the dropped half is above one half, or exactly one half with
// an odd kept part). NaN stays a (quiet) NaN; a finite float rounds to inf
// only above bf16's largest finite value (3.39e38).
inline uint16_t FloatToBf16(float f) {
  const uint32_t x = FloatBits(f);
  const uint32_t rounded = (x + 0x7FFFu + ((x >> 16) & 1u)) >> 16;
  const uint32_t is_nan = 0u - static_cast<uint32_t>((x & 0x7FFFFFFFu) > 0x7F800000u);
  return static_cast<uint16_t>((((x >> 16) | 0x40u) & is_nan) | (rounded & ~is_nan));
}

// Exact: every bf16 is a float.
inline float Bf16ToFloat(uint16_t h) { return BitsFloat(static_cast<uint32_t>(h) << 16); }

// A half's two bytes, low byte first.
inline uint16_t ReadHalf(const char* p) {
  const auto* u = reinterpret_cast<const uint8_t*>(p);
  return static_cast<uint16_t>(u[0] | (u[1] << 8));
}
inline void WriteHalf(uint16_t h, char* p) {
  p[0] = static_cast<char>(h & 0xFF);
  p[1] = static_cast<char>(h >> 8);
}
// Whether a half is inf or NaN (the decoders refuse those).
inline bool HalfNotFinite(uint16_t h) { return (h & 0x7C00) == 0x7C00; }

}  // namespace mt::half_float
