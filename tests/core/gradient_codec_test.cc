// The gradient codec: exact sizes, fp16 rounding checked against an
// independent reference, int8's per-block error bound, error feedback that
// loses nothing over many steps, and a decoder that rejects bad input.
#include "core/compress/gradient_codec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/support/random_values.h"

namespace mt {
namespace {

using ::testing::HasSubstr;

// kLowRank included: a flat vector (no matrices known) goes as int8.
const Compression kAll[] = {Compression::kNone, Compression::kFp16, Compression::kInt8,
                            Compression::kTopK, Compression::kLowRank};

using test_support::RandomNormal;

std::vector<float> RoundTrip(Compression c, const std::vector<float>& src) {
  std::string bytes;
  EncodeFloats(c, src.data(), src.size(), nullptr, &bytes);
  std::vector<float> out(src.size());
  const std::string err = DecodeFloats(c, bytes.data(), bytes.size(), out.size(), out.data());
  EXPECT_EQ(err, "");
  return out;
}

uint16_t HalfBits(float x) {
  std::string bytes;
  EncodeFloats(Compression::kFp16, &x, 1, nullptr, &bytes);
  return static_cast<uint16_t>(static_cast<uint8_t>(bytes[0]) |
                               (static_cast<uint8_t>(bytes[1]) << 8));
}

float Fp16(float x) { return RoundTrip(Compression::kFp16, {x})[0]; }

// Independent reference: round to the binary16 grid with double arithmetic
// (one quantum per binade, 2^-24 below 2^-14), ties to even, then clamp.
float ReferenceFp16(float x) {
  int e;
  std::frexp(static_cast<double>(x), &e);
  const double q = std::ldexp(1.0, std::max(e - 1, -14) - 10);
  const double r = std::nearbyint(x / q) * q;
  return static_cast<float>(std::max(-65504.0, std::min(65504.0, r)));
}

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

float Int8Scale(const std::string& bytes, size_t block) {
  float s;
  std::memcpy(&s, bytes.data() + block * (4 + kInt8Block), 4);
  return s;
}

TEST(GradientCodecTest, EncodedBytesMatchesOutput) {
  EXPECT_EQ(EncodedBytes(Compression::kNone, 1000), 4000u);
  EXPECT_EQ(EncodedBytes(Compression::kFp16, 1000), 2000u);
  EXPECT_EQ(EncodedBytes(Compression::kInt8, 1000), 1000u + 4 * 4);
  EXPECT_EQ(EncodedBytes(Compression::kInt8, 256), 256u + 4);
  EXPECT_EQ(EncodedBytes(Compression::kInt8, 0), 0u);
  for (Compression c : kAll) {
    for (size_t n : {0, 1, 255, 256, 257, 1000}) {
      const std::vector<float> src = RandomNormal(n, static_cast<uint32_t>(n));
      std::string out = "stale";
      EncodeFloats(c, src.data(), n, nullptr, &out);
      EXPECT_EQ(out.size(), EncodedBytes(c, n)) << CompressionName(c) << " n=" << n;
    }
  }
}

TEST(GradientCodecTest, ReusesTheOutputBuffer) {
  const std::vector<float> src = RandomNormal(1000, 1);
  for (Compression c : kAll) {
    std::string out;
    out.reserve(4000);
    const char* before = out.data();
    EncodeFloats(c, src.data(), src.size(), nullptr, &out);
    EXPECT_EQ(out.data(), before) << CompressionName(c);
  }
}

TEST(GradientCodecTest, NoneIsExact) {
  std::vector<float> src = RandomNormal(1000, 2);
  src[0] = std::numeric_limits<float>::denorm_min();
  src[1] = -0.0f;
  src[2] = 3.0e38f;
  const std::vector<float> out = RoundTrip(Compression::kNone, src);
  EXPECT_EQ(std::memcmp(out.data(), src.data(), src.size() * 4), 0);

  std::vector<float> residual(src.size(), 0.0f);
  std::string bytes;
  EncodeFloats(Compression::kNone, src.data(), src.size(), residual.data(), &bytes);
  EXPECT_EQ(std::memcmp(bytes.data(), src.data(), src.size() * 4), 0) << "a zero residual";
  for (float r : residual) ASSERT_EQ(r, 0.0f);
}

TEST(GradientCodecTest, NoneSendsWhatALossyEncodingOwed) {
  // int8 first: the small values are owed; none then sends them whole.
  std::vector<float> src(300, 0.001f);
  src[0] = 100.0f;
  std::vector<float> residual(src.size(), 0.0f), out(src.size());
  std::string bytes;
  EncodeFloats(Compression::kInt8, src.data(), src.size(), residual.data(), &bytes);
  ASSERT_EQ(DecodeFloats(Compression::kInt8, bytes.data(), bytes.size(), out.size(), out.data()),
            "");
  EXPECT_EQ(out[1], 0.0f);
  EXPECT_EQ(residual[1], 0.001f);
  EncodeFloats(Compression::kNone, src.data(), src.size(), residual.data(), &bytes);
  ASSERT_EQ(DecodeFloats(Compression::kNone, bytes.data(), bytes.size(), out.size(), out.data()),
            "");
  EXPECT_EQ(out[1], 0.002f);
  for (float r : residual) ASSERT_EQ(r, 0.0f);
}

TEST(GradientCodecTest, Fp16KnownValues) {
  EXPECT_EQ(HalfBits(1.0f), 0x3C00);
  EXPECT_EQ(HalfBits(-2.5f), 0xC100);
  EXPECT_EQ(HalfBits(65504.0f), 0x7BFF);
  EXPECT_EQ(HalfBits(0.0f), 0x0000);
  EXPECT_EQ(HalfBits(-0.0f), 0x8000);
  EXPECT_EQ(HalfBits(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(Fp16(1.0f), 1.0f);
  EXPECT_EQ(Fp16(-2.5f), -2.5f);
  EXPECT_EQ(Fp16(65504.0f), 65504.0f);
  // Beyond the range: clamped, never inf.
  EXPECT_EQ(Fp16(70000.0f), 65504.0f);
  EXPECT_EQ(Fp16(-70000.0f), -65504.0f);
  EXPECT_EQ(Fp16(65520.0f), 65504.0f);  // would round to inf
  EXPECT_EQ(Fp16(std::numeric_limits<float>::infinity()), 65504.0f);
  EXPECT_EQ(Fp16(3.0e38f), 65504.0f);
  // Underflow and subnormals (units of 2^-24 = 5.96e-8).
  EXPECT_EQ(Fp16(1e-8f), 0.0f);
  EXPECT_EQ(Fp16(std::numeric_limits<float>::denorm_min()), 0.0f);
  EXPECT_EQ(HalfBits(6e-8f), 0x0001);
  EXPECT_EQ(Fp16(6e-8f), std::ldexp(1.0f, -24));
  EXPECT_EQ(Fp16(std::ldexp(1.0f, -25)), 0.0f);                   // half a unit: ties to even 0
  EXPECT_EQ(Fp16(std::ldexp(3.0f, -25)), std::ldexp(1.0f, -23));  // 1.5 units: to even 2
  EXPECT_EQ(Fp16(std::ldexp(5.0f, -25)), std::ldexp(1.0f, -23));  // 2.5 units: to even 2
  EXPECT_EQ(Fp16(std::ldexp(1023.0f, -24)), std::ldexp(1023.0f, -24));  // largest subnormal
  // Round to nearest even among normals: the quantum at 1 is 2^-10.
  EXPECT_EQ(Fp16(1.0f + std::ldexp(1.0f, -11)), 1.0f);                          // tie, 1 is even
  EXPECT_EQ(Fp16(1.0f + std::ldexp(3.0f, -11)), 1.0f + std::ldexp(2.0f, -10));  // tie, up to even
  EXPECT_EQ(Fp16(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)),
            1.0f + std::ldexp(1.0f, -10));
  EXPECT_EQ(Fp16(2049.0f), 2048.0f);  // tie between 2048 (even) and 2050
  EXPECT_EQ(Fp16(2051.0f), 2052.0f);  // tie between 2050 (odd) and 2052
}

TEST(GradientCodecTest, Fp16EveryHalfRoundTripsExactly) {
  std::vector<float> all;
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7C00) == 0x7C00) continue;  // inf and NaN
    const int mag =
        static_cast<int>(h & 0x3FF) + ((h & 0x7C00) ? 0x400 : 0);  // with the implicit bit
    const int exp = (h & 0x7C00) ? static_cast<int>((h >> 10) & 0x1F) - 25 : -24;
    all.push_back(((h & 0x8000) ? -1.0f : 1.0f) * std::ldexp(static_cast<float>(mag), exp));
  }
  ASSERT_EQ(all.size(), 2u * 31 * 1024);
  const std::vector<float> out = RoundTrip(Compression::kFp16, all);
  for (size_t i = 0; i < all.size(); ++i) ASSERT_EQ(Bits(out[i]), Bits(all[i])) << all[i];
}

TEST(GradientCodecTest, Fp16MatchesReferenceRounding) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<uint32_t> bits;
  std::vector<float> src;
  while (src.size() < 1000000) {
    const uint32_t u = bits(rng);
    float x;
    std::memcpy(&x, &u, 4);
    // Concentrate on the range fp16 can hold, where the rounding matters.
    if (std::isfinite(x) && std::fabs(x) < 1e5f) src.push_back(x);
    const float y = std::ldexp(x - std::trunc(x), static_cast<int>(u % 44) - 28);
    if (std::isfinite(y)) src.push_back(y);
  }
  const std::vector<float> out = RoundTrip(Compression::kFp16, src);
  for (size_t i = 0; i < src.size(); ++i) ASSERT_EQ(out[i], ReferenceFp16(src[i])) << src[i];
}

TEST(GradientCodecTest, Fp16RelativeErrorWithinHalfAnUlp) {
  std::vector<float> src = RandomNormal(100000, 4);
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> e(-12, 14);
  for (float& x : src) x = std::ldexp(x, e(rng));  // many binades, all in fp16's normal range
  const std::vector<float> out = RoundTrip(Compression::kFp16, src);
  for (size_t i = 0; i < src.size(); ++i) {
    if (std::fabs(src[i]) < std::ldexp(1.0f, -14) || std::fabs(src[i]) > 65504.0f) continue;
    ASSERT_LE(std::fabs(out[i] - src[i]), std::ldexp(std::fabs(src[i]), -11)) << src[i];
  }
}

TEST(GradientCodecTest, Int8ErrorWithinHalfAStepPerBlock) {
  const size_t n = 1000;
  std::vector<float> src = RandomNormal(n, 6);
  for (size_t i = 256; i < 512; ++i) src[i] *= 1e-4f;
  std::string bytes;
  EncodeFloats(Compression::kInt8, src.data(), n, nullptr, &bytes);
  std::vector<float> out(n);
  ASSERT_EQ(DecodeFloats(Compression::kInt8, bytes.data(), bytes.size(), n, out.data()), "");
  for (size_t b = 0; b * kInt8Block < n; ++b) {
    float max = 0.0f;
    for (size_t i = b * kInt8Block; i < std::min(n, (b + 1) * kInt8Block); ++i)
      max = std::max(max, std::fabs(src[i]));
    const float scale = Int8Scale(bytes, b);
    EXPECT_FLOAT_EQ(scale, max / 127.0f) << "block " << b;
    for (size_t i = b * kInt8Block; i < std::min(n, (b + 1) * kInt8Block); ++i)
      ASSERT_LE(std::fabs(out[i] - src[i]), scale * 0.50002f) << "block " << b << " i=" << i;
  }
}

TEST(GradientCodecTest, Int8AllZeroBlockDecodesToZeros) {
  std::vector<float> src(600, 0.0f);
  src[599] = 1.0f;  // the last block is not all zero
  std::string bytes;
  EncodeFloats(Compression::kInt8, src.data(), src.size(), nullptr, &bytes);
  EXPECT_EQ(Int8Scale(bytes, 0), 0.0f);
  EXPECT_EQ(Int8Scale(bytes, 1), 0.0f);
  std::vector<float> out(src.size(), 7.0f);
  ASSERT_EQ(DecodeFloats(Compression::kInt8, bytes.data(), bytes.size(), out.size(), out.data()),
            "");
  for (size_t i = 0; i < 599; ++i) ASSERT_EQ(out[i], 0.0f) << i;
  EXPECT_FLOAT_EQ(out[599], 1.0f);
}

TEST(GradientCodecTest, Int8ScaleIsPerBlock) {
  // A large block next to a small one: the small values keep their precision.
  std::vector<float> src(512);
  for (size_t i = 0; i < 256; ++i) src[i] = 1000.0f * std::sin(static_cast<float>(i));
  for (size_t i = 256; i < 512; ++i) src[i] = 1e-3f * std::cos(static_cast<float>(i));
  const std::vector<float> out = RoundTrip(Compression::kInt8, src);
  for (size_t i = 256; i < 512; ++i) ASSERT_NEAR(out[i], src[i], 1e-3f / 254 * 1.001f) << i;
  // Sharing the large block's scale (half step 1000/254), they would nearly all be 0.
  int nonzero = 0;
  for (size_t i = 256; i < 512; ++i) nonzero += out[i] != 0.0f;
  EXPECT_GT(nonzero, 240);
}

TEST(GradientCodecTest, Int8ErrorFeedbackLosesNothingOverTime) {
  // One block: a large value sets the step to 1, the small ones sit far
  // below the half step that rounding needs.
  std::vector<float> g(kInt8Block);
  g[0] = 127.0f;
  for (size_t i = 1; i < g.size(); ++i)
    g[i] = 0.05f + 0.05f * static_cast<float>(i % 11) / 10;  // 0.05..0.1
  const int steps =
      20000;  // the mean is off by at most half a step / steps: 2.5e-5, half of 1e-3 of 0.05
  std::vector<float> residual(g.size(), 0.0f), out(g.size());
  std::vector<double> with(g.size(), 0.0), without(g.size(), 0.0);
  std::string bytes;
  for (int t = 0; t < steps; ++t) {
    EncodeFloats(Compression::kInt8, g.data(), g.size(), residual.data(), &bytes);
    ASSERT_EQ(DecodeFloats(Compression::kInt8, bytes.data(), bytes.size(), out.size(), out.data()),
              "");
    for (size_t i = 0; i < g.size(); ++i) with[i] += out[i];
    EncodeFloats(Compression::kInt8, g.data(), g.size(), nullptr, &bytes);
    ASSERT_EQ(DecodeFloats(Compression::kInt8, bytes.data(), bytes.size(), out.size(), out.data()),
              "");
    for (size_t i = 1; i < g.size(); ++i) ASSERT_EQ(out[i], 0.0f) << "without feedback, step " << t;
    for (size_t i = 0; i < g.size(); ++i) without[i] += out[i];
  }
  for (size_t i = 0; i < g.size(); ++i) {
    EXPECT_NEAR(with[i] / steps, g[i], 1e-3 * g[i]) << i;
    EXPECT_LE(std::fabs(residual[i]), 0.5001f) << i;
    // What was sent plus what is still owed is exactly what was given.
    EXPECT_NEAR(with[i] + residual[i], static_cast<double>(g[i]) * steps, 1e-2) << i;
  }
  EXPECT_EQ(without[1], 0.0);
}

TEST(GradientCodecTest, Fp16ErrorFeedbackLosesNothingOverTime) {
  // fp16 holds 2048 and 2050 but nothing between.
  const std::vector<float> g = {2048.25f, 1.0f + std::ldexp(1.0f, -13)};
  std::vector<float> residual(g.size(), 0.0f), out(g.size());
  double sum[2] = {0, 0};
  std::string bytes;
  const int steps = 1000;
  for (int t = 0; t < steps; ++t) {
    EncodeFloats(Compression::kFp16, g.data(), g.size(), residual.data(), &bytes);
    ASSERT_EQ(DecodeFloats(Compression::kFp16, bytes.data(), bytes.size(), out.size(), out.data()),
              "");
    for (size_t i = 0; i < g.size(); ++i) sum[i] += out[i];
  }
  EXPECT_EQ(Fp16(g[0]), 2048.0f);
  EXPECT_EQ(Fp16(g[1]), 1.0f);
  for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(sum[i] / steps, g[i], 1e-6 * g[i]) << i;
}

TEST(GradientCodecTest, DecodeRejectsWrongSizes) {
  std::vector<float> out(300);
  const std::string bytes(2000, '\0');
  for (Compression c : kAll) {
    for (size_t n : {1, 256, 257, 300}) {
      const size_t want = EncodedBytes(c, n);
      const std::vector<float> src = RandomNormal(n, 3);
      std::string good;
      EncodeFloats(c, src.data(), n, nullptr, &good);
      EXPECT_EQ(DecodeFloats(c, good.data(), good.size(), n, out.data()), "");
      for (size_t size : {want - 1, want + 1, size_t{0}}) {
        const std::string err = DecodeFloats(c, bytes.data(), size, n, out.data());
        EXPECT_THAT(err, HasSubstr("bytes for " + std::to_string(n) + " values"))
            << CompressionName(c) << " n=" << n << " size=" << size;
      }
    }
    // A count so large that its size would wrap around.
    const size_t huge = std::numeric_limits<size_t>::max() / 2 + 1;
    EXPECT_NE(DecodeFloats(c, bytes.data(), EncodedBytes(c, huge), huge, out.data()), "")
        << CompressionName(c);
  }
  EXPECT_EQ(DecodeFloats(Compression::kFp16, nullptr, 0, 0, nullptr), "");
}

TEST(GradientCodecTest, DecodeRejectsBadInt8Scales) {
  const std::vector<float> src = RandomNormal(300, 7);
  std::string good;
  EncodeFloats(Compression::kInt8, src.data(), src.size(), nullptr, &good);
  std::vector<float> out(src.size());
  const float bad[] = {std::numeric_limits<float>::quiet_NaN(), -1.0f, -0.5e-30f,
                       std::numeric_limits<float>::infinity(), std::numeric_limits<float>::max()};
  for (float scale : bad) {
    std::string bytes = good;
    std::memcpy(&bytes[4 + kInt8Block], &scale, 4);  // the second block's scale
    const std::string err =
        DecodeFloats(Compression::kInt8, bytes.data(), bytes.size(), out.size(), out.data());
    EXPECT_THAT(err, HasSubstr("block 1 has scale")) << scale;
  }
  // The largest accepted scale times the most negative byte is still finite.
  std::string bytes = good;
  const float max_scale = std::numeric_limits<float>::max() / 128;
  std::memcpy(&bytes[0], &max_scale, 4);
  bytes[4] = static_cast<char>(-128);
  ASSERT_EQ(DecodeFloats(Compression::kInt8, bytes.data(), bytes.size(), out.size(), out.data()),
            "");
  EXPECT_TRUE(std::isfinite(out[0]));
}

TEST(GradientCodecTest, DecodeRejectsNonFiniteFp16) {
  std::vector<float> out(3);
  for (uint16_t h : {0x7C00, 0xFC00, 0x7E00, 0x7C01}) {
    std::string bytes(6, '\0');
    bytes[2] = static_cast<char>(h & 0xFF);
    bytes[3] = static_cast<char>(h >> 8);
    const std::string err =
        DecodeFloats(Compression::kFp16, bytes.data(), bytes.size(), 3, out.data());
    EXPECT_THAT(err, HasSubstr("inf or NaN")) << std::hex << h;
  }
}

TEST(GradientCodecTest, ExtremeInputsStillDecodeFinite) {
  const float big = std::numeric_limits<float>::max();
  const std::vector<float> src = {big, -big, 1.0f, std::numeric_limits<float>::denorm_min()};
  for (Compression c : {Compression::kFp16, Compression::kInt8, Compression::kTopK}) {
    const std::vector<float> out = RoundTrip(c, src);
    for (float x : out) EXPECT_TRUE(std::isfinite(x)) << CompressionName(c);
  }
}

TEST(GradientCodecTest, IsDeterministic) {
  const std::vector<float> src = RandomNormal(1000, 8);
  for (Compression c : kAll) {
    std::vector<float> r1(src.size(), 0.01f), r2 = r1;
    std::string a, b;
    EncodeFloats(c, src.data(), src.size(), r1.data(), &a);
    EncodeFloats(c, src.data(), src.size(), r2.data(), &b);
    EXPECT_EQ(a, b) << CompressionName(c);
    EXPECT_EQ(std::memcmp(r1.data(), r2.data(), r1.size() * 4), 0) << CompressionName(c);
    std::vector<float> d1(src.size()), d2(src.size());
    ASSERT_EQ(DecodeFloats(c, a.data(), a.size(), src.size(), d1.data()), "");
    ASSERT_EQ(DecodeFloats(c, a.data(), a.size(), src.size(), d2.data()), "");
    EXPECT_EQ(std::memcmp(d1.data(), d2.data(), d1.size() * 4), 0) << CompressionName(c);
  }
}

}  // namespace
}  // namespace mt
