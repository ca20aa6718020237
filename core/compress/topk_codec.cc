#include "core/compress/topk_codec.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/compress/gradient_codec.h"
#include "core/compress/int8_steps.h"

namespace mt {
namespace {

// The offsets of the `kept` largest |v[j]| of one block, ascending. Ties in
// magnitude keep the lower offset (the same choice on every machine); NaN
// counts as smaller than any number, so the comparison stays an order.
void ChooseKept(const float* v, size_t b, size_t kept, uint8_t* offsets) {
  float mag[kTopKBlock];
  uint8_t order[kTopKBlock];
  for (size_t j = 0; j < b; ++j) {
    mag[j] = std::isnan(v[j]) ? -1.0f : std::fabs(v[j]);
    order[j] = static_cast<uint8_t>(j);
  }
  const auto larger = [&mag](uint8_t x, uint8_t y) {
    return mag[x] > mag[y] || (mag[x] == mag[y] && x < y);
  };
  if (kept < b) std::nth_element(order, order + kept, order + b, larger);
  std::copy(order, order + kept, offsets);
  std::sort(offsets, offsets + kept);
}

}  // namespace

size_t TopKBytes(size_t n) {
  const size_t full = n / kTopKBlock, rest = n % kTopKBlock;
  return full * (4 + 2 * kTopKKept) + (rest ? 4 + 2 * std::min(rest, kTopKKept) : 0);
}

void EncodeTopK(const float* src, size_t n, float* residual, char* out) {
  float v[kTopKBlock];
  for (size_t begin = 0; begin < n; begin += kTopKBlock) {
    const size_t b = std::min(kTopKBlock, n - begin), kept = std::min(b, kTopKKept);
    const float* s = src + begin;
    float* r = residual ? residual + begin : nullptr;
    for (size_t j = 0; j < b; ++j) v[j] = r ? s[j] + r[j] : s[j];  // + 0.0f would lose -0
    auto* offsets = reinterpret_cast<uint8_t*>(out + 4);
    auto* q = reinterpret_cast<int8_t*>(out + 4 + kept);
    ChooseKept(v, b, kept, offsets);
    float m = 0.0f;
    for (size_t i = 0; i < kept; ++i) m = std::max(m, std::fabs(v[offsets[i]]));
    const float scale = int8_steps::ScaleFor(m);
    std::memcpy(out, &scale, 4);
    // What is not sent stays in the residual whole; what is, less its rounding.
    if (r) std::copy(v, v + b, r);
    for (size_t i = 0; i < kept; ++i) {
      const float x = v[offsets[i]];
      const float t = int8_steps::Steps(x, scale);
      q[i] = static_cast<int8_t>(t);
      if (r) r[offsets[i]] = x - t * scale;
    }
    out += 4 + 2 * kept;
  }
}

std::string DecodeTopK(const char* bytes, size_t n, float* dst) {
  for (size_t begin = 0; begin < n; begin += kTopKBlock) {
    const size_t b = std::min(kTopKBlock, n - begin), kept = std::min(b, kTopKKept);
    float scale;
    std::memcpy(&scale, bytes, 4);
    std::string problem = int8_steps::ScaleProblem("topk", begin / kTopKBlock, scale);
    if (!problem.empty()) return problem;
    const auto* offsets = reinterpret_cast<const uint8_t*>(bytes + 4);
    const auto* q = reinterpret_cast<const int8_t*>(bytes + 4 + kept);
    for (size_t i = 0; i < kept; ++i)
      if (offsets[i] >= b || (i > 0 && offsets[i] <= offsets[i - 1]))
        return "topk: block " + std::to_string(begin / kTopKBlock) + " has offset " +
               std::to_string(offsets[i]) + " at " + std::to_string(i) +
               " (offsets must increase and stay inside the block of " + std::to_string(b) + ")";
    std::fill(dst + begin, dst + begin + b, 0.0f);
    for (size_t i = 0; i < kept; ++i) dst[begin + offsets[i]] = static_cast<float>(q[i]) * scale;
    bytes += 4 + 2 * kept;
  }
  return "";
}

}  // namespace mt
