// kernels/half_storage.h's ops on the CPU: element-wise loops over
// kernels/half_float.h's conversions, which GCC vectorises (integer
// operations, so every vector width gives the scalar loop's bits), split
// over the pool in 16-value-aligned chunks when large.
#include "kernels/half_storage.h"

#include <algorithm>
#include <stdexcept>

#include "kernels/cpu/cpu_backend.h"
#include "kernels/half_float.h"

namespace mt::kernels {
namespace {

// Below this many values a conversion takes a few microseconds on one core.
constexpr size_t kParallelValues = size_t{1} << 15;

template <class Fn>
void ForRanges(CpuBackend& be, size_t n, Fn&& fn) {
  if (n < kParallelValues || be.threads() == 1) {
    fn(size_t{0}, n);
    return;
  }
  const size_t blocks = (n + 15) / 16;
  be.pool().ParallelFor(static_cast<int64_t>(blocks), [&](int64_t b, int64_t e, int) {
    fn(static_cast<size_t>(b) * 16, std::min(static_cast<size_t>(e) * 16, n));
  });
}

void Pack(CpuBackend& be, View src, View dst, HalfFormat format) {
  const size_t n = src.count;
  if (n == 0) return;
  if (dst.count < HalfElements(n))
    throw std::invalid_argument("pack_halves: destination too small");
  const float* x = CpuBackend::Data(src);
  auto* h = reinterpret_cast<uint16_t*>(CpuBackend::Data(dst));
  if (format == HalfFormat::kBf16) {
    ForRanges(be, n, [x, h](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) h[i] = half_float::FloatToBf16(x[i]);
    });
  } else {
    ForRanges(be, n, [x, h](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) h[i] = half_float::FloatToHalf(x[i]);
    });
  }
}

// FloatToHalf never writes inf, and a NaN as 0x7E00, which HalfToFloat
// (finite halves only) would read as a number: masked back to NaN.
inline float HalfOrNan(uint16_t h) {
  const uint32_t bits = half_float::FloatBits(half_float::HalfToFloat(h));
  const uint32_t not_finite = 0u - static_cast<uint32_t>(half_float::HalfNotFinite(h));
  return half_float::BitsFloat((bits & ~not_finite) | (0x7FC00000u & not_finite));
}

void Unpack(CpuBackend& be, View src, View dst, HalfFormat format) {
  const size_t n = dst.count;
  if (n == 0) return;
  if (src.count < HalfElements(n)) throw std::invalid_argument("unpack_halves: source too small");
  const auto* h = reinterpret_cast<const uint16_t*>(CpuBackend::Data(src));
  float* y = CpuBackend::Data(dst);
  if (format == HalfFormat::kBf16) {
    ForRanges(be, n, [h, y](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) y[i] = half_float::Bf16ToFloat(h[i]);
    });
  } else {
    ForRanges(be, n, [h, y](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) y[i] = HalfOrNan(h[i]);
    });
  }
}

}  // namespace

MT_REGISTER_OP("pack_halves", Pack);
MT_REGISTER_OP("unpack_halves", Unpack);

}  // namespace mt::kernels
