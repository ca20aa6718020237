#include "core/compress/gradient_codec.h"

#include "core/compress/int8_steps.h"
#include "core/compress/topk_codec.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace mt {
namespace {

// Like byte_io.h, this assumes a little-endian host (all mt targets are) for
// the raw floats and the int8 scales; fp16 values are assembled byte by byte.

static_assert(kMaxInt8Scale == std::numeric_limits<float>::max() / 128);

uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

float BitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

constexpr uint32_t kHalfMaxAsFloat = 0x477FE000;  // 65504.0f

uint16_t FloatToHalf(float f) {
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
float HalfToFloat(uint16_t h) {
  const uint32_t em = h & 0x7FFFu;
  const uint32_t normal = (em << 13) + ((127u - 15u) << 23);
  const uint32_t subnormal = FloatBits(static_cast<float>(static_cast<int32_t>(em)) * 0x1p-24f);
  const uint32_t is_subnormal = 0u - static_cast<uint32_t>(em < 0x400);
  const uint32_t bits = (subnormal & is_subnormal) | (normal & ~is_subnormal);
  return BitsFloat(bits | (static_cast<uint32_t>(h & 0x8000) << 16));
}

void EncodeFp16(const float* src, size_t n, float* residual, char* out) {
  for (size_t i = 0; i < n; ++i) {
    const float v = residual ? src[i] + residual[i] : src[i];  // + 0.0f would lose -0
    const uint16_t h = FloatToHalf(v);
    out[2 * i] = static_cast<char>(h & 0xFF);
    out[2 * i + 1] = static_cast<char>(h >> 8);
    if (residual) residual[i] = v - HalfToFloat(h);
  }
}

void EncodeNone(const float* src, size_t n, float* residual, char* out) {
  if (!residual) {
    std::memcpy(out, src, 4 * n);
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    const float v = residual[i] != 0.0f ? src[i] + residual[i] : src[i];  // keeps -0
    std::memcpy(out + 4 * i, &v, 4);
    residual[i] = 0.0f;
  }
}

void EncodeInt8(const float* src, size_t n, float* residual, char* out) {
  for (size_t b = 0; b < n; b += kInt8Block) {
    const size_t k = std::min(kInt8Block, n - b);
    const float* s = src + b;
    float* r = residual ? residual + b : nullptr;
    float m = 0.0f;
    for (size_t j = 0; j < k; ++j) m = std::max(m, std::fabs(r ? s[j] + r[j] : s[j]));
    const float scale = int8_steps::ScaleFor(m);
    std::memcpy(out, &scale, 4);
    auto* q = reinterpret_cast<int8_t*>(out + 4);
    for (size_t j = 0; j < k; ++j) {
      const float v = r ? s[j] + r[j] : s[j];
      const float t = int8_steps::Steps(v, scale);
      q[j] = static_cast<int8_t>(t);
      if (r) r[j] = v - t * scale;
    }
    out += 4 + k;
  }
}

std::string SizeError(Compression c, size_t size, size_t n) {
  return std::string(CompressionName(c)) + ": " + std::to_string(size) + " bytes for " +
         std::to_string(n) + " values, expected " + std::to_string(EncodedBytes(c, n));
}

}  // namespace

const char* CompressionName(Compression c) {
  switch (c) {
    case Compression::kNone: return "none";
    case Compression::kFp16: return "fp16";
    case Compression::kInt8: return "int8";
    case Compression::kTopK: return "topk";
  }
  return "?";
}

size_t EncodedBytes(Compression c, size_t n) {
  switch (c) {
    case Compression::kNone: return 4 * n;
    case Compression::kFp16: return 2 * n;
    case Compression::kInt8: return n + 4 * ((n + kInt8Block - 1) / kInt8Block);
    case Compression::kTopK: return TopKBytes(n);
  }
  return 0;
}

void EncodeFloats(Compression c, const float* src, size_t n, float* residual, std::string* out) {
  out->resize(EncodedBytes(c, n));
  if (n == 0) return;
  char* p = &(*out)[0];
  switch (c) {
    case Compression::kNone: EncodeNone(src, n, residual, p); return;
    case Compression::kFp16: EncodeFp16(src, n, residual, p); return;
    case Compression::kInt8: EncodeInt8(src, n, residual, p); return;
    case Compression::kTopK: EncodeTopK(src, n, residual, p); return;
  }
}

std::string DecodeFloats(Compression c, const char* bytes, size_t size, size_t n, float* dst) {
  // Beyond this, EncodedBytes could wrap around and match a short input.
  if (n > std::numeric_limits<size_t>::max() / 8)
    return std::string(CompressionName(c)) + ": too many values";
  if (size != EncodedBytes(c, n)) return SizeError(c, size, n);
  if (n == 0) return "";
  switch (c) {
    case Compression::kNone: std::memcpy(dst, bytes, 4 * n); return "";
    case Compression::kFp16: {
      const auto* p = reinterpret_cast<const uint8_t*>(bytes);
      uint32_t bad = 0;  // checked once after the loop, to keep it branch-free
      for (size_t i = 0; i < n; ++i) {
        const uint16_t h = static_cast<uint16_t>(p[2 * i] | (p[2 * i + 1] << 8));
        bad |= (h & 0x7C00) == 0x7C00;
        dst[i] = HalfToFloat(h);
      }
      if (bad) return "fp16: a value is inf or NaN";
      return "";
    }
    case Compression::kInt8:
      for (size_t b = 0; b < n; b += kInt8Block) {
        const size_t k = std::min(kInt8Block, n - b);
        float scale;
        std::memcpy(&scale, bytes, 4);
        std::string problem = int8_steps::ScaleProblem("int8", b / kInt8Block, scale);
        if (!problem.empty()) return problem;
        const auto* q = reinterpret_cast<const int8_t*>(bytes + 4);
        for (size_t j = 0; j < k; ++j) dst[b + j] = static_cast<float>(q[j]) * scale;
        bytes += 4 + k;
      }
      return "";
    case Compression::kTopK: return DecodeTopK(bytes, n, dst);
  }
  return "unknown compression";
}

}  // namespace mt
