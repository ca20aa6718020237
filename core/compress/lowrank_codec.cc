#include "core/compress/lowrank_codec.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/compress/gradient_codec.h"
#include "kernels/half_float.h"

namespace mt {
namespace {

using half_float::FloatBits;
using half_float::FloatToHalf;
using half_float::HalfNotFinite;
using half_float::HalfToFloat;
using half_float::ReadHalf;
using half_float::WriteHalf;

// One decoded value: P's row i against Q's (scaled) row j, in k order. The
// encoder computes its residual with this too.
inline float Entry(const float* p_row, const float* q_row, size_t rank) {
  float acc = 0.0f;
  for (size_t k = 0; k < rank; ++k) acc += p_row[k] * q_row[k];
  return acc;
}

// A fixed start for a warm column that is all zero (the first message, or
// a matrix whose change was zero): any vector not orthogonal to M's leading
// directions will do, and a fixed one keeps runs reproducible.
float StartValue(size_t j, size_t k) {
  uint32_t x = static_cast<uint32_t>(j * 2654435761u) ^ static_cast<uint32_t>(k * 40503u + 1);
  x ^= x >> 16;
  x *= 0x7feb352d;
  x ^= x >> 15;
  x *= 0x846ca68b;
  x ^= x >> 16;
  return static_cast<float>(x >> 8) * 0x1p-23f - 1.0f;  // [-1, 1)
}

// The exponent e of 2^e that brings a column whose largest magnitude is
// max_abs to at most 2^15 as halves, within the decoder's range.
int ScaleExponent(float max_abs) {
  if (!(max_abs > 0.0f)) return 0;
  int ex = 0;
  std::frexp(max_abs, &ex);  // max_abs < 2^ex
  return std::clamp(ex - 15, kLowRankMinExponent, kLowRankMaxExponent);
}

}  // namespace

size_t LowRankBytes(size_t rows, size_t cols, size_t rank) {
  return 4 * rank + 2 * rank * (rows + cols);
}

size_t LowRankRank(size_t rows, size_t cols) {
  const size_t int8_bytes = EncodedBytes(Compression::kInt8, rows * cols);
  const size_t most = std::min({kLowRankMaxRank, rows, cols});
  for (size_t r = most; r >= 1; --r)
    if (2 * LowRankBytes(rows, cols, r) <= int8_bytes) return r;
  return 0;
}

void EncodeLowRank(const float* m, size_t rows, size_t cols, size_t rank, float* residual,
                   float* warm, float* scratch, char* out) {
  const size_t r = std::min(rank, kLowRankMaxRank);
  // M, formed where the residual is kept: what is owed travels with it.
  for (size_t i = 0; i < rows * cols; ++i) residual[i] += m[i];
  for (size_t k = 0; k < r; ++k) {
    bool zero = true;
    for (size_t j = 0; j < cols && zero; ++j) zero = warm[j * r + k] == 0.0f;
    if (zero)
      for (size_t j = 0; j < cols; ++j) warm[j * r + k] = StartValue(j, k);
  }
  float* p = scratch;             // rows x r
  float* q = scratch + rows * r;  // cols x r
  // P = M Q_prev.
  for (size_t i = 0; i < rows; ++i) {
    double acc[kLowRankMaxRank] = {};
    const float* row = residual + i * cols;
    for (size_t j = 0; j < cols; ++j)
      for (size_t k = 0; k < r; ++k) acc[k] += static_cast<double>(row[j]) * warm[j * r + k];
    for (size_t k = 0; k < r; ++k) p[i * r + k] = static_cast<float>(acc[k]);
  }
  // Orthonormal columns (modified Gram-Schmidt). A column with almost
  // nothing left of it (M of lower rank) becomes zero, and so does its part
  // of Q: normalised, its rounding noise would be a unit vector that mostly
  // repeats the columns before it, and count their part of M twice.
  for (size_t k = 0; k < r; ++k) {
    double before = 0;
    for (size_t i = 0; i < rows; ++i) before += static_cast<double>(p[i * r + k]) * p[i * r + k];
    for (size_t l = 0; l < k; ++l) {
      double dot = 0;
      for (size_t i = 0; i < rows; ++i) dot += static_cast<double>(p[i * r + k]) * p[i * r + l];
      for (size_t i = 0; i < rows; ++i) p[i * r + k] -= static_cast<float>(dot) * p[i * r + l];
    }
    double norm = 0;
    for (size_t i = 0; i < rows; ++i) norm += static_cast<double>(p[i * r + k]) * p[i * r + k];
    norm = std::sqrt(norm);
    const bool kept = norm > 1e-30 && norm * norm > 1e-8 * before && std::isfinite(norm);
    const float inv = kept ? static_cast<float>(1.0 / norm) : 0.0f;
    for (size_t i = 0; i < rows; ++i) p[i * r + k] *= inv;
  }
  // P as halves; from here on P is what the decoder will read, so Q is
  // fitted to the rounded P.
  char* p_bytes = out + 4 * r;
  for (size_t i = 0; i < rows * r; ++i) {
    const uint16_t h = FloatToHalf(p[i]);
    WriteHalf(h, p_bytes + 2 * i);
    p[i] = HalfToFloat(h);
  }
  // Q = M^T P.
  std::fill(q, q + cols * r, 0.0f);
  for (size_t i = 0; i < rows; ++i) {
    const float* row = residual + i * cols;
    const float* pi = p + i * r;
    for (size_t j = 0; j < cols; ++j)
      for (size_t k = 0; k < r; ++k) q[j * r + k] += row[j] * pi[k];
  }
  std::copy(q, q + cols * r, warm);  // the next message's start
  char* q_bytes = p_bytes + 2 * rows * r;
  for (size_t k = 0; k < r; ++k) {
    float max_abs = 0.0f;
    for (size_t j = 0; j < cols; ++j) max_abs = std::max(max_abs, std::fabs(q[j * r + k]));
    const int e = ScaleExponent(max_abs);
    const float scale = std::ldexp(1.0f, e), unscale = std::ldexp(1.0f, -e);
    std::memcpy(out + 4 * k, &scale, 4);
    for (size_t j = 0; j < cols; ++j) {
      const uint16_t h = FloatToHalf(q[j * r + k] * unscale);
      WriteHalf(h, q_bytes + 2 * (j * r + k));
      q[j * r + k] = HalfToFloat(h) * scale;  // as the decoder will have it
    }
  }
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < cols; ++j) residual[i * cols + j] -= Entry(p + i * r, q + j * r, r);
}

std::string DecodeLowRank(const char* bytes, size_t rows, size_t cols, size_t rank, float* dst,
                          float* scratch) {
  const size_t r = std::min(rank, kLowRankMaxRank);
  float scale[kLowRankMaxRank];
  for (size_t k = 0; k < r; ++k) {
    std::memcpy(&scale[k], bytes + 4 * k, 4);
    const uint32_t u = FloatBits(scale[k]);
    const int e = static_cast<int>(u >> 23) - 127;  // the sign bit makes it large
    if ((u & 0x7FFFFFu) != 0 || e < kLowRankMinExponent || e > kLowRankMaxExponent)
      return "lowrank: component " + std::to_string(k) + " has scale " + std::to_string(scale[k]) +
             " (must be a power of two from 2^" + std::to_string(kLowRankMinExponent) + " to 2^" +
             std::to_string(kLowRankMaxExponent) + ")";
  }
  const char* p_bytes = bytes + 4 * r;
  const char* q_bytes = p_bytes + 2 * rows * r;
  uint32_t bad = 0;  // checked once after the loops, to keep them branch-free
  for (size_t j = 0; j < cols; ++j)
    for (size_t k = 0; k < r; ++k) {
      const uint16_t h = ReadHalf(q_bytes + 2 * (j * r + k));
      bad |= HalfNotFinite(h);
      scratch[j * r + k] = HalfToFloat(h) * scale[k];
    }
  for (size_t i = 0; i < rows; ++i) {
    float pi[kLowRankMaxRank];
    for (size_t k = 0; k < r; ++k) {
      const uint16_t h = ReadHalf(p_bytes + 2 * (i * r + k));
      bad |= HalfNotFinite(h);
      pi[k] = HalfToFloat(h);
    }
    float* out = dst + i * cols;
    for (size_t j = 0; j < cols; ++j) out[j] = Entry(pi, scratch + j * r, r);
  }
  if (bad) return "lowrank: a factor is inf or NaN";
  return "";
}

}  // namespace mt
