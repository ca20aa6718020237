// 16-bit storage of activations (kernels/half_storage.h): round to nearest
// even at the boundaries that decide it, NaN and range, and the same bits
// from the split, vectorised op as from the scalar conversion value by value.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/cpu/cpu_backend.h"
#include "kernels/half_float.h"
#include "kernels/half_storage.h"

namespace mt::kernels {
namespace {

float Bits(uint32_t u) { return half_float::BitsFloat(u); }

// Packs then widens `values` on a backend of `threads`.
std::vector<float> RoundTrip(const std::vector<float>& values, HalfFormat format, int threads,
                             std::vector<uint16_t>* halves = nullptr) {
  CpuBackend be(threads);
  auto src = be.Allocate(values.size());
  auto packed = be.Allocate(HalfElements(values.size()));
  auto dst = be.Allocate(values.size());
  be.Upload(values.data(), WholeOf(*src));
  kPackHalves(be, WholeOf(*src), WholeOf(*packed), format);
  kUnpackHalves(be, WholeOf(*packed), WholeOf(*dst), format);
  std::vector<float> out(values.size());
  be.Download(WholeOf(*dst), out.data());
  if (halves) {
    halves->resize(HalfElements(values.size()) * 2);
    be.Download(WholeOf(*packed), halves->data());
    halves->resize(values.size());
  }
  return out;
}

TEST(HalfStorage, Bf16RoundsToNearestEven) {
  // 1 + 2^-8 lies halfway between bf16's 1 and 1 + 2^-7: even is 1. 1 + 3 *
  // 2^-8 lies halfway between 1 + 2^-7 and 1 + 2^-6: even is 1 + 2^-6. Just
  // above a half rounds up, just below down; negatives mirror.
  const std::vector<float> in{1.0f + 0x1p-8f,
                              1.0f + 3 * 0x1p-8f,
                              Bits(0x3F808001),
                              Bits(0x3F807FFF),
                              -(1.0f + 0x1p-8f),
                              0.0f,
                              -0.0f};
  const std::vector<float> want{1.0f, 1.0f + 0x1p-6f, 1.0f + 0x1p-7f, 1.0f, -1.0f, 0.0f, -0.0f};
  const std::vector<float> got = RoundTrip(in, HalfFormat::kBf16, 1);
  for (size_t i = 0; i < in.size(); ++i)
    EXPECT_EQ(half_float::FloatBits(got[i]), half_float::FloatBits(want[i]))
        << "value " << i << ": " << in[i];
  // A subnormal: 1e-40 is 0x000116C2, its top half 0x0001 and a dropped
  // 0x16C2, below half.
  EXPECT_EQ(half_float::FloatBits(RoundTrip({1e-40f}, HalfFormat::kBf16, 1)[0]), 0x00010000u);
}

TEST(HalfStorage, NanStaysNanAndRangesHold) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> in{nan, -nan, inf, -inf, 3e38f, 1e5f, -1e5f, 65504.0f, 6.0f};
  const std::vector<float> bf = RoundTrip(in, HalfFormat::kBf16, 1);
  EXPECT_TRUE(std::isnan(bf[0]));
  EXPECT_TRUE(std::isnan(bf[1]));
  EXPECT_EQ(bf[2], inf);
  EXPECT_EQ(bf[3], -inf);
  EXPECT_NEAR(bf[4], 3e38f, 3e38f * 0x1p-8f);  // bf16 keeps a float's range
  EXPECT_EQ(bf[8], 6.0f);
  const std::vector<float> fp = RoundTrip(in, HalfFormat::kFp16, 1);
  EXPECT_TRUE(std::isnan(fp[0]));
  EXPECT_TRUE(std::isnan(fp[1]));
  // fp16 clamps at its largest finite value, never inf.
  EXPECT_EQ(fp[2], 65504.0f);
  EXPECT_EQ(fp[3], -65504.0f);
  EXPECT_EQ(fp[5], 65504.0f);
  EXPECT_EQ(fp[6], -65504.0f);
  EXPECT_EQ(fp[7], 65504.0f);
  EXPECT_EQ(fp[8], 6.0f);
}

// Within half a unit in the last place: at most 2^-8 relative for bf16's
// 8-bit significand, 2^-11 for fp16's 11 bits (in fp16's normal range).
TEST(HalfStorage, ErrorIsWithinHalfAnUlp) {
  std::vector<float> in(4099);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = std::ldexp(1.0f + static_cast<float>(i % 997) / 997.0f, static_cast<int>(i % 21) - 10) *
            (i % 2 ? 1.0f : -1.0f);
  const std::vector<float> bf = RoundTrip(in, HalfFormat::kBf16, 1);
  const std::vector<float> fp = RoundTrip(in, HalfFormat::kFp16, 1);
  for (size_t i = 0; i < in.size(); ++i) {
    ASSERT_LE(std::fabs(bf[i] - in[i]), std::fabs(in[i]) * 0x1p-8f) << i;
    ASSERT_LE(std::fabs(fp[i] - in[i]), std::fabs(in[i]) * 0x1p-11f) << i;
  }
}

// The op, split over threads and vectorised, gives the scalar conversion's
// bits value by value, odd counts included (the last element half used).
TEST(HalfStorage, SplitVectorisedOpsGiveTheScalarConversionsBits) {
  for (const size_t n : {size_t{1}, size_t{17}, size_t{40001}, size_t{100003}}) {
    std::vector<float> in(n);
    uint32_t state = 12345;
    for (float& x : in) {
      state = state * 1664525u + 1013904223u;
      x = half_float::BitsFloat((state & 0x8FFFFFFFu) | 0x30000000u);  // many exponents
    }
    for (const HalfFormat format : {HalfFormat::kBf16, HalfFormat::kFp16}) {
      std::vector<uint16_t> halves_1, halves_3;
      const std::vector<float> one = RoundTrip(in, format, 1, &halves_1);
      const std::vector<float> three = RoundTrip(in, format, 3, &halves_3);
      for (size_t i = 0; i < n; ++i) {
        const uint16_t scalar = format == HalfFormat::kBf16 ? half_float::FloatToBf16(in[i])
                                                            : half_float::FloatToHalf(in[i]);
        ASSERT_EQ(halves_1[i], scalar) << "value " << i << " of " << n;
        ASSERT_EQ(halves_3[i], scalar) << "value " << i << " of " << n;
      }
      ASSERT_EQ(std::memcmp(one.data(), three.data(), n * sizeof(float)), 0);
    }
  }
}

}  // namespace
}  // namespace mt::kernels
