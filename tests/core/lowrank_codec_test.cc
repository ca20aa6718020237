// The low-rank codec (core/compress/lowrank_codec.h) and the segment codec
// that cuts a segment into factored matrices and int8 runs
// (core/compress/segment_codec.h): a matrix of low rank comes back whole
// from one message, error feedback makes the sum received converge to the
// sum given, the decoder refuses malformed factors, and its sums are the
// same with and without fused multiply-adds (an arm64 worker against an
// x86-64 hub).
#include "core/compress/lowrank_codec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/compress/gradient_codec.h"
#include "core/compress/segment_codec.h"
#include "tests/support/random_values.h"

namespace mt {
namespace {

using ::testing::HasSubstr;

using test_support::RandomNormal;

struct Encoded {
  std::string bytes;
  std::vector<float> residual;
};

// One message of m (rows x cols) with a fresh residual and warm start.
std::string EncodeOnce(const std::vector<float>& m, size_t rows, size_t cols, size_t rank,
                       std::vector<float>* residual = nullptr) {
  std::vector<float> own(m.size(), 0.0f);
  std::vector<float>& r = residual ? *residual : own;
  std::vector<float> warm(cols * rank, 0.0f), scratch((rows + cols) * rank);
  std::string bytes(LowRankBytes(rows, cols, rank), '\0');
  EncodeLowRank(m.data(), rows, cols, rank, r.data(), warm.data(), scratch.data(), &bytes[0]);
  return bytes;
}

std::vector<float> Decode(const std::string& bytes, size_t rows, size_t cols, size_t rank) {
  std::vector<float> out(rows * cols, 99.0f), scratch(cols * rank);
  EXPECT_EQ(DecodeLowRank(bytes.data(), rows, cols, rank, out.data(), scratch.data()), "");
  return out;
}

TEST(LowRankCodec, SizesAndTheRankRule) {
  EXPECT_EQ(LowRankBytes(120, 400, 4), 4u * 4 + 2u * 4 * 520);  // LeNet-5's fc1: 4,176
  EXPECT_EQ(LowRankRank(120, 400), 4u);
  EXPECT_EQ(LowRankRank(84, 120), 4u);
  // Smaller matrices get a lower rank: at most half of int8's bytes.
  EXPECT_EQ(LowRankRank(16, 150), 3u);
  EXPECT_EQ(LowRankRank(10, 84), 2u);
  // Too small to gain anything: int8.
  EXPECT_EQ(LowRankRank(6, 25), 1u);  // LeNet-5's conv1
  EXPECT_EQ(LowRankRank(4, 25), 0u);
  EXPECT_EQ(LowRankRank(1, 1000), 0u);
  EXPECT_EQ(LowRankRank(3, 3), 0u);
  for (size_t rows : {2u, 7u, 64u, 300u})
    for (size_t cols : {2u, 9u, 150u, 1000u}) {
      const size_t r = LowRankRank(rows, cols);
      if (r) {
        EXPECT_LE(2 * LowRankBytes(rows, cols, r), EncodedBytes(Compression::kInt8, rows * cols));
      }
    }
}

TEST(LowRankCodec, AMatrixOfLowRankComesBackFromOneMessage) {
  const size_t rows = 60, cols = 90, rank = 4;
  // Rank 2: a sum of two outer products.
  const std::vector<float> a = RandomNormal(rows * 2, 1), b = RandomNormal(cols * 2, 2, 1e-3f);
  std::vector<float> m(rows * cols);
  float largest = 0;
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < cols; ++j) {
      m[i * cols + j] = a[2 * i] * b[2 * j] + a[2 * i + 1] * b[2 * j + 1];
      largest = std::max(largest, std::fabs(m[i * cols + j]));
    }
  std::vector<float> residual(m.size(), 0.0f);
  const std::vector<float> out =
      Decode(EncodeOnce(m, rows, cols, rank, &residual), rows, cols, rank);
  for (size_t i = 0; i < m.size(); ++i) {
    ASSERT_NEAR(out[i], m[i], 3e-3f * largest) << i;  // halves' rounding only
    // The residual is exactly what the decoder missed.
    ASSERT_FLOAT_EQ(residual[i], m[i] - out[i]) << i;
  }
}

TEST(LowRankCodec, ErrorFeedbackMakesTheSumReceivedTheSumGiven) {
  // A full-rank gradient, the same every step: rank 4 of 40 cannot carry
  // it in one message, but what is left out travels in later ones.
  const size_t rows = 40, cols = 50, rank = 4, steps = 300;
  const std::vector<float> g = RandomNormal(rows * cols, 3, 0.01f);
  std::vector<float> residual(g.size(), 0.0f), warm(cols * rank, 0.0f),
      scratch((rows + cols) * rank), received(g.size(), 0.0f), out(g.size());
  std::string bytes(LowRankBytes(rows, cols, rank), '\0');
  double first_error = 0;
  for (size_t s = 0; s < steps; ++s) {
    EncodeLowRank(g.data(), rows, cols, rank, residual.data(), warm.data(), scratch.data(),
                  &bytes[0]);
    ASSERT_EQ(DecodeLowRank(bytes.data(), rows, cols, rank, out.data(), scratch.data()), "");
    double err = 0, norm = 0;
    for (size_t i = 0; i < g.size(); ++i) {
      received[i] += out[i];
      const double given = static_cast<double>(g[i]) * static_cast<double>(s + 1);
      err += (received[i] - given) * (received[i] - given);
      norm += given * given;
    }
    if (s == 0) first_error = std::sqrt(err / norm);
    if (s + 1 == steps) {
      EXPECT_GT(first_error, 0.5);  // one message carries little of it
      EXPECT_LT(std::sqrt(err / norm), 0.05);
    }
  }
}

// The decoder's sums as a machine that fuses multiply and add computes them.
std::vector<float> DecodeFused(const std::string& bytes, size_t rows, size_t cols, size_t rank) {
  auto half = [&](size_t at) {
    std::vector<float> one(1);
    std::string h = bytes.substr(at, 2);
    EXPECT_EQ(DecodeFloats(Compression::kFp16, h.data(), 2, 1, one.data()), "");
    return one[0];
  };
  std::vector<float> scale(rank);
  for (size_t k = 0; k < rank; ++k) std::memcpy(&scale[k], bytes.data() + 4 * k, 4);
  const size_t p_at = 4 * rank, q_at = p_at + 2 * rows * rank;
  std::vector<float> out(rows * cols);
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < cols; ++j) {
      float acc = 0.0f;
      for (size_t k = 0; k < rank; ++k)
        acc = std::fma(half(p_at + 2 * (i * rank + k)), half(q_at + 2 * (j * rank + k)) * scale[k],
                       acc);
      out[i * cols + j] = acc;
    }
  return out;
}

TEST(LowRankCodec, FusedAndSeparateMultiplyAddDecodeTheSameBits) {
  const size_t rows = 24, cols = 30, rank = 4;
  std::mt19937 rng(7);
  for (float sd : {1e-30f, 1e-6f, 1.0f, 1e6f}) {
    const std::vector<float> m = RandomNormal(rows * cols, static_cast<uint32_t>(sd * 3 + 1), sd);
    std::string bytes = EncodeOnce(m, rows, cols, rank);
    // Also random halves (subnormal ones included) under the extreme scales.
    std::string raw = bytes;
    for (size_t at = 4 * rank; at < raw.size(); ++at) raw[at] = static_cast<char>(rng() & 0xFF);
    for (size_t at = 4 * rank + 1; at < raw.size(); at += 2)
      raw[at] = static_cast<char>(raw[at] & 0xBB);  // no exponent 31: finite halves
    for (size_t k = 0; k < rank; ++k) {
      const float s = std::ldexp(1.0f, k % 2 ? kLowRankMinExponent : kLowRankMaxExponent);
      std::memcpy(&raw[4 * k], &s, 4);
    }
    for (const std::string* b : {&bytes, &raw}) {
      const std::vector<float> plain = Decode(*b, rows, cols, rank),
                               fused = DecodeFused(*b, rows, cols, rank);
      for (size_t i = 0; i < plain.size(); ++i) {
        ASSERT_TRUE(std::isfinite(plain[i]));
        ASSERT_EQ(std::memcmp(&plain[i], &fused[i], 4), 0) << "sd " << sd << " value " << i;
      }
    }
  }
}

TEST(LowRankCodec, DecoderRefusesMalformedFactors) {
  const size_t rows = 8, cols = 10, rank = 2;
  const std::string good = EncodeOnce(RandomNormal(rows * cols, 5), rows, cols, rank);
  std::vector<float> out(rows * cols), scratch(cols * rank);
  auto with_scale = [&](float s) {
    std::string b = good;
    std::memcpy(&b[4], &s, 4);
    return DecodeLowRank(b.data(), rows, cols, rank, out.data(), scratch.data());
  };
  EXPECT_EQ(with_scale(0.5f), "");
  for (float bad : {3.0f, -1.0f, 0.0f, std::ldexp(1.0f, kLowRankMinExponent - 1),
                    std::ldexp(1.0f, kLowRankMaxExponent + 1), NAN, INFINITY})
    EXPECT_THAT(with_scale(bad), HasSubstr("must be a power of two")) << bad;
  for (size_t at : {4 * rank + 2 * 3, 4 * rank + 2 * rows * rank + 2 * 5}) {  // in P, in Q
    std::string b = good;
    b[at] = 0x00;
    b[at + 1] = 0x7C;  // +inf
    EXPECT_THAT(DecodeLowRank(b.data(), rows, cols, rank, out.data(), scratch.data()),
                HasSubstr("inf or NaN"));
  }
}

TEST(SegmentCodec, FactorsTheWholeRowsOfItsMatricesAndSendsTheRestAsInt8) {
  const std::vector<ParamMatrix> matrices = {{100, 20, 40}, {2000, 2, 2}};
  const SegmentCodec whole(0, 1000, matrices);
  ASSERT_EQ(whole.factored().size(), 1u);
  EXPECT_EQ(whole.factored()[0].rows, 20u);
  const size_t r = LowRankRank(20, 40);
  EXPECT_EQ(whole.Bytes(Compression::kLowRank),
            2 * EncodedBytes(Compression::kInt8, 100) + LowRankBytes(20, 40, r));
  EXPECT_EQ(whole.Bytes(Compression::kTopK), EncodedBytes(Compression::kTopK, 1000));
  // A segment that starts mid-row: its whole rows, from the next row on.
  const SegmentCodec cut(110, 900, matrices);
  ASSERT_EQ(cut.factored().size(), 1u);
  EXPECT_EQ(cut.factored()[0].rows, 19u);
  EXPECT_EQ(cut.Bytes(Compression::kLowRank),
            EncodedBytes(Compression::kInt8, 30) + LowRankBytes(19, 40, LowRankRank(19, 40)));
  // No matrix in it: int8, byte for byte.
  SegmentCodec flat(1000, 1500, matrices);
  const std::vector<float> v = RandomNormal(500, 9);
  std::vector<float> r1(500, 0.0f), r2(500, 0.0f);
  std::string a, b;
  flat.Encode(Compression::kLowRank, v.data(), r1.data(), &a);
  EncodeFloats(Compression::kInt8, v.data(), 500, r2.data(), &b);
  EXPECT_EQ(a, b);
}

TEST(SegmentCodec, RoundTripsAndRefusesTheWrongSize) {
  const std::vector<ParamMatrix> matrices = {{50, 30, 60}};
  SegmentCodec sender(0, 2000, matrices), receiver(0, 2000, matrices);
  const std::vector<float> v = RandomNormal(2000, 11);
  std::vector<float> residual(2000, 0.0f), out(2000, 0.0f);
  std::string bytes;
  for (int step = 0; step < 3; ++step) {
    sender.Encode(Compression::kLowRank, v.data(), residual.data(), &bytes);
    ASSERT_EQ(bytes.size(), sender.Bytes(Compression::kLowRank));
    ASSERT_EQ(receiver.Decode(Compression::kLowRank, bytes.data(), bytes.size(), out.data()), "");
  }
  // The int8 runs around the matrix come back within half a step.
  for (size_t i : {0u, 49u, 1850u, 1999u}) EXPECT_NEAR(out[i], v[i], 0.06f) << i;
  for (size_t i = 0; i < 2000; ++i) ASSERT_TRUE(std::isfinite(out[i]));
  EXPECT_THAT(receiver.Decode(Compression::kLowRank, bytes.data(), bytes.size() - 1, out.data()),
              HasSubstr("expected"));
  // The other encodings pass through to the flat codec.
  std::string none;
  sender.Encode(Compression::kNone, v.data(), nullptr, &none);
  ASSERT_EQ(receiver.Decode(Compression::kNone, none.data(), none.size(), out.data()), "");
  EXPECT_EQ(out, v);
  // Error feedback is what makes lowrank lossless over time: required.
  EXPECT_THROW(sender.Encode(Compression::kLowRank, v.data(), nullptr, &bytes),
               std::invalid_argument);
}

}  // namespace
}  // namespace mt
