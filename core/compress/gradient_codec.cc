#include "core/compress/gradient_codec.h"

#include "core/compress/int8_steps.h"
#include "core/compress/topk_codec.h"
#include "kernels/half_float.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace mt {
namespace {

using half_float::FloatToHalf;
using half_float::HalfToFloat;

// Like byte_io.h, this assumes a little-endian host (all mt targets are) for
// the raw floats and the int8 scales; fp16 values are assembled byte by byte.

static_assert(kMaxInt8Scale == std::numeric_limits<float>::max() / 128);

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
    case Compression::kLowRank: return "lowrank";
  }
  return "?";
}

size_t EncodedBytes(Compression c, size_t n) {
  switch (c) {
    case Compression::kNone: return 4 * n;
    case Compression::kFp16: return 2 * n;
    case Compression::kInt8:
    case Compression::kLowRank:  // a flat vector has no matrices: int8
      return n + 4 * ((n + kInt8Block - 1) / kInt8Block);
    case Compression::kTopK: return TopKBytes(n);
  }
  return 0;
}

void EncodeFloats(Compression c, const float* src, size_t n, float* residual, std::string* out) {
  out->resize(EncodedBytes(c, n));
  if (n == 0) return;
  EncodeFloatsInto(c, src, n, residual, &(*out)[0]);
}

void EncodeFloatsInto(Compression c, const float* src, size_t n, float* residual, char* p) {
  if (n == 0) return;
  switch (c) {
    case Compression::kNone: EncodeNone(src, n, residual, p); return;
    case Compression::kFp16: EncodeFp16(src, n, residual, p); return;
    case Compression::kInt8:
    case Compression::kLowRank: EncodeInt8(src, n, residual, p); return;
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
    case Compression::kLowRank:
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
