// The top-k codec (core/compress/topk_codec.h): the 32 largest of every 256
// values travel, within half an int8 step of their value; the rest decode to
// zero and, with error feedback, travel later, so over many messages the sum
// received is the sum given; the decoder refuses malformed blocks.
#include "core/compress/topk_codec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "core/compress/gradient_codec.h"
#include "tests/support/random_values.h"

namespace mt {
namespace {

using ::testing::HasSubstr;

using test_support::RandomNormal;

std::vector<float> Decoded(const std::string& bytes, size_t n) {
  std::vector<float> out(n, 99.0f);
  EXPECT_EQ(DecodeFloats(Compression::kTopK, bytes.data(), bytes.size(), n, out.data()), "");
  return out;
}

TEST(TopKCodec, SizesPerBlock) {
  EXPECT_EQ(EncodedBytes(Compression::kTopK, 0), 0u);
  EXPECT_EQ(EncodedBytes(Compression::kTopK, 256), 68u);
  EXPECT_EQ(EncodedBytes(Compression::kTopK, 1000), 3 * 68u + 68u);   // 232 left: 32 kept
  EXPECT_EQ(EncodedBytes(Compression::kTopK, 259), 68u + 4 + 2 * 3);  // 3 left: all kept
  // Against raw floats, 1/15; against int8, 1/3.8.
  EXPECT_LT(EncodedBytes(Compression::kTopK, 1 << 20) * 15,
            EncodedBytes(Compression::kNone, 1 << 20));
}

TEST(TopKCodec, KeepsTheLargestOfEachBlockWithinHalfAStep) {
  const size_t n = 3 * kTopKBlock + 100;
  const std::vector<float> src = RandomNormal(n, 1);
  std::string bytes;
  EncodeFloats(Compression::kTopK, src.data(), n, nullptr, &bytes);
  const std::vector<float> out = Decoded(bytes, n);
  for (size_t begin = 0; begin < n; begin += kTopKBlock) {
    const size_t b = std::min(kTopKBlock, n - begin);
    std::vector<size_t> order(b);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
      return std::fabs(src[begin + x]) > std::fabs(src[begin + y]);
    });
    const float step = std::fabs(src[begin + order[0]]) / 127;
    for (size_t i = 0; i < b; ++i) {
      const size_t j = begin + order[i];
      if (i < kTopKKept)
        EXPECT_NEAR(out[j], src[j], 0.5f * step + 1e-7f) << "kept " << j;
      else
        EXPECT_EQ(out[j], 0.0f) << "dropped " << j;
    }
  }
}

TEST(TopKCodec, TiesKeepTheLowerOffsets) {
  std::vector<float> src(kTopKBlock, 1.0f);
  std::string bytes;
  EncodeFloats(Compression::kTopK, src.data(), src.size(), nullptr, &bytes);
  const std::vector<float> out = Decoded(bytes, src.size());
  for (size_t j = 0; j < src.size(); ++j) EXPECT_EQ(out[j], j < kTopKKept ? 1.0f : 0.0f) << j;
}

TEST(TopKCodec, ErrorFeedbackSendsEverythingOverTime) {
  // Each block has one large value and 255 small ones that are never among
  // the 32 largest of a single message: only the feedback brings them across.
  const size_t n = 2 * kTopKBlock;
  std::vector<float> g(n);
  for (size_t j = 0; j < n; ++j) g[j] = j % kTopKBlock == 0 ? 10.0f : 0.01f * (1 + j % 7);
  std::vector<float> residual(n, 0.0f), out(n);
  std::vector<double> sum(n, 0.0);
  std::string bytes;
  const int steps = 4000;
  for (int t = 0; t < steps; ++t) {
    EncodeFloats(Compression::kTopK, g.data(), n, residual.data(), &bytes);
    ASSERT_EQ(DecodeFloats(Compression::kTopK, bytes.data(), bytes.size(), n, out.data()), "");
    for (size_t j = 0; j < n; ++j) sum[j] += out[j];
  }
  // In steady state a small value goes once its owed sum reaches the level
  // at which 31 places a message carry all the small values of its block:
  // that level, the block's small sum / 31, bounds what any value is owed,
  // however many messages are sent.
  double small_sum = 0;
  for (size_t j = 1; j < kTopKBlock; ++j) small_sum += g[j];
  const double owed_at_most = 1.5 * small_sum / (kTopKKept - 1);
  for (size_t j = 0; j < n; ++j) {
    // What was sent plus what is still owed is what was given...
    EXPECT_NEAR(sum[j] + residual[j], static_cast<double>(g[j]) * steps, 1e-3 * g[j] * steps) << j;
    // ... and what is owed stays bounded, so the mean received converges.
    EXPECT_LE(std::fabs(residual[j]), owed_at_most) << j;
    EXPECT_NEAR(sum[j] / steps, g[j], owed_at_most / steps) << j;
  }
}

TEST(TopKCodec, DecodeRefusesMalformedBlocks) {
  const std::vector<float> src = RandomNormal(300, 2);
  std::string good;
  EncodeFloats(Compression::kTopK, src.data(), src.size(), nullptr, &good);
  std::vector<float> out(src.size());
  auto decode = [&](const std::string& b) {
    return DecodeFloats(Compression::kTopK, b.data(), b.size(), out.size(), out.data());
  };
  ASSERT_EQ(decode(good), "");
  std::string bad = good;
  bad[4 + 3] = bad[4 + 2];  // a repeated offset
  EXPECT_THAT(decode(bad), HasSubstr("offsets must increase"));
  bad = good;
  // The last block (44 values, all 32 kept) has its offsets after the first
  // block's bytes and its own scale: two past its end, still increasing.
  const size_t last_offsets = 4 + 2 * kTopKKept + 4;
  bad[last_offsets + kTopKKept - 1] = static_cast<char>(50);
  bad[last_offsets + kTopKKept - 2] = static_cast<char>(45);
  EXPECT_THAT(decode(bad), HasSubstr("block 1"));
  bad = good;
  const float nan = std::nanf("");
  std::memcpy(&bad[0], &nan, 4);
  EXPECT_THAT(decode(bad), HasSubstr("scale"));
}

}  // namespace
}  // namespace mt
