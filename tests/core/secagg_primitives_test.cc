// The pieces of secure aggregation (core/secagg/): the fixed-point ring
// (exact sums, no wrap for any number of workers), X25519 agreement and its
// derived keys, ChaCha20 masks by position, the sealed share boxes, and
// Shamir's sharing (t shares rebuild, t - 1 do not).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/secagg/fixed_point.h"
#include "core/secagg/mask_stream.h"
#include "core/secagg/pair_keys.h"
#include "core/secagg/shamir.h"
#include "core/secagg/share_box.h"
#include "tests/support/chi_square.h"
#include "tests/support/random_values.h"

namespace mt::secagg {
namespace {

using test_support::RandomNormal;

TEST(SecAggFixedPoint, RoundTripsWithinHalfAStepAndClips) {
  const FixedPoint fp;
  EXPECT_EQ(fp.Scale(), std::ldexp(1.0, 26));  // 2^30 / 16
  const std::vector<float> x = {0.0F, 1e-3F, -0.25F, 15.9F, -16.0F, 40.0F, -1e9F, NAN};
  std::vector<uint32_t> q(x.size());
  std::vector<float> back(x.size());
  fp.Encode(x.data(), x.size(), 1.0, q.data());
  fp.Decode(q.data(), q.size(), 1.0, back.data());
  for (size_t k = 0; k < 5; ++k) EXPECT_NEAR(back[k], x[k], fp.Step() / 2) << k;
  EXPECT_EQ(back[5], 16.0F);   // clipped
  EXPECT_EQ(back[6], -16.0F);  // clipped
  EXPECT_EQ(back[7], -16.0F);  // NaN cannot travel
}

TEST(SecAggFixedPoint, WeightedSumOfManyWorkersWithinHalfAStepEachAndNoWrap) {
  const FixedPoint fp;
  for (int n : {3, 64, 1000}) {
    // Every worker at the clip, weights summing to 1: the sum reaches
    // +-clip, the edge of the ring's range, and must not wrap.
    for (float edge : {16.0F, -16.0F}) {
      std::vector<uint32_t> sum(1, 0), q(1);
      for (int i = 0; i < n; ++i) {
        fp.Encode(&edge, 1, 1.0 / n, q.data());
        AddInRing(sum.data(), q.data(), 1);
      }
      float out = 0;
      fp.Decode(sum.data(), 1, 1.0, &out);
      EXPECT_NEAR(out, edge, n * fp.Step()) << n;
    }
  }
  // Random updates, unequal weights: within n half steps of the plain sum.
  const int n = 5;
  const size_t len = 4096;
  const std::vector<double> w = {0.1, 0.3, 0.2, 0.25, 0.15};
  std::vector<uint32_t> sum(len, 0), q(len);
  std::vector<double> plain(len, 0.0);
  for (int i = 0; i < n; ++i) {
    const std::vector<float> x = RandomNormal(len, 10 + i, 0.5F);
    fp.Encode(x.data(), len, w[i], q.data());
    AddInRing(sum.data(), q.data(), len);
    for (size_t k = 0; k < len; ++k) plain[k] += w[i] * x[k];
  }
  std::vector<float> out(len);
  fp.Decode(sum.data(), len, 1.0, out.data());
  for (size_t k = 0; k < len; ++k) {
    ASSERT_NEAR(out[k], plain[k], n * fp.Step() / 2 + 1e-6 * std::abs(plain[k])) << k;
  }
}

TEST(SecAggKeys, BothEndsAgreeAndDerivedKeysDependOnUseAndPair) {
  const KeyPair a = KeyPair::Generate(), b = KeyPair::Generate(), c = KeyPair::Generate();
  EXPECT_EQ(a.Agree(b.public_key()), b.Agree(a.public_key()));
  EXPECT_NE(a.Agree(b.public_key()), a.Agree(c.public_key()));
  EXPECT_EQ(KeyPair::FromPrivate(a.private_key()).public_key(), a.public_key());
  const Key32 s = a.Agree(b.public_key());
  EXPECT_EQ(DeriveKey(s, KeyUse::kMask, 7, 1, 2), DeriveKey(s, KeyUse::kMask, 7, 2, 1));
  EXPECT_NE(DeriveKey(s, KeyUse::kMask, 7, 1, 2), DeriveKey(s, KeyUse::kShareBox, 7, 1, 2));
  EXPECT_NE(DeriveKey(s, KeyUse::kMask, 7, 1, 2), DeriveKey(s, KeyUse::kMask, 8, 1, 2));
  EXPECT_NE(DeriveKey(s, KeyUse::kMask, 7, 1, 2), DeriveKey(s, KeyUse::kMask, 7, 1, 3));
  // The all-zero point gives the all-zero secret: refused.
  EXPECT_THROW(a.Agree(Key32{}), std::runtime_error);
}

TEST(SecAggMask, AnySegmentIsTheSameMaskAndAddThenSubtractRestores) {
  MaskStream stream;
  const Key32 key = RandomKey();
  const size_t n = 5000;
  std::vector<uint32_t> whole(n, 0);
  stream.Apply(key, 3, MaskKind::kPair, 0, whole.data(), n, false);
  // Segments at odd offsets, in another order, match the whole vector's mask.
  std::vector<uint32_t> pieces(n, 0);
  for (auto [first, count] : {std::pair<size_t, size_t>{4001, 999}, {17, 3984}, {0, 17}}) {
    stream.Apply(key, 3, MaskKind::kPair, first, pieces.data() + first, count, false);
  }
  EXPECT_EQ(pieces, whole);
  std::vector<uint32_t> other(n, 0);
  stream.Apply(key, 4, MaskKind::kPair, 0, other.data(), n, false);
  EXPECT_NE(other, whole);  // each round a fresh mask
  stream.Apply(key, 3, MaskKind::kPair, 0, whole.data(), n, true);
  EXPECT_EQ(whole, std::vector<uint32_t>(n, 0));
}

TEST(SecAggShareBox, OpensOnlyUnderItsKeyAndLabel) {
  const Key32 key = RandomKey();
  const BoxLabel label{5, 9, ShareKind::kSelfSeed, 2, 3};
  const std::string box = Seal(key, label, "a share");
  EXPECT_EQ(box.find("a share"), std::string::npos);
  EXPECT_EQ(Open(key, label, box), "a share");
  std::string altered = box;
  altered[1] ^= 1;
  EXPECT_THROW(Open(key, label, altered), std::runtime_error);
  EXPECT_THROW(Open(RandomKey(), label, box), std::runtime_error);
  for (BoxLabel other :
       {BoxLabel{5, 10, ShareKind::kSelfSeed, 2, 3}, BoxLabel{5, 9, ShareKind::kPrivateKey, 2, 3},
        BoxLabel{5, 9, ShareKind::kSelfSeed, 2, 4}, BoxLabel{6, 9, ShareKind::kSelfSeed, 2, 3}}) {
    EXPECT_THROW(Open(key, other, box), std::runtime_error);
  }
  EXPECT_THROW(Open(key, label, "short"), std::runtime_error);
}

TEST(SecAggShamir, AnyThresholdSharesRebuildAndFewerDoNot) {
  const Key32 k = RandomKey();
  const std::string secret(k.begin(), k.end());
  const int n = 5, t = 3;
  const std::vector<Share> shares = SplitSecret(secret, t, {1, 2, 3, 4, 5});
  ASSERT_EQ(shares.size(), 5u);
  // Every subset of exactly t shares rebuilds it.
  for (int mask = 0; mask < (1 << n); ++mask) {
    std::vector<Share> subset;
    for (int i = 0; i < n; ++i) {
      if (mask & (1 << i)) subset.push_back(shares[i]);
    }
    if (subset.size() == static_cast<size_t>(t)) {
      EXPECT_EQ(CombineShares(subset, t, 32), secret) << mask;
    } else if (subset.size() == static_cast<size_t>(t - 1)) {
      // t - 1 shares: refused, and interpolating them anyway misses it.
      EXPECT_THROW(CombineShares(subset, t, 32), std::invalid_argument);
      EXPECT_NE(InterpolateAtZero(subset, 32), secret) << mask;
    }
  }
  EXPECT_THROW(SplitSecret(secret, 0, {1, 2, 3}), std::invalid_argument);
  EXPECT_THROW(SplitSecret(secret, 4, {1, 2, 3}), std::invalid_argument);
  EXPECT_THROW(SplitSecret(secret, 2, {1, 2, 2}), std::invalid_argument);
  EXPECT_THROW(SplitSecret(secret, 2, {0, 1, 2}), std::invalid_argument);
}

TEST(SecAggShamir, SharesTravelAsBytesAndJunkIsRefused) {
  const std::vector<Share> shares = SplitSecret("seventeen bytes!!", 2, {4, 9, 13});
  for (const Share& s : shares) {
    const Share back = ParseShare(SerializeShare(s));
    EXPECT_EQ(back.x, s.x);
    EXPECT_EQ(back.limbs, s.limbs);
  }
  EXPECT_EQ(CombineShares({ParseShare(SerializeShare(shares[2])), shares[0]}, 2, 17),
            "seventeen bytes!!");
  EXPECT_THROW(ParseShare("abc"), std::invalid_argument);
  EXPECT_THROW(ParseShare(std::string(12, '\xff')), std::invalid_argument);  // limb >= p
  EXPECT_THROW(ParseShare(std::string(12, '\0')), std::invalid_argument);    // place 0
  EXPECT_THROW(CombineShares({shares[0], shares[0]}, 2, 17), std::invalid_argument);
}

TEST(SecAggMask, MaskedBytesLookUniformWhileTheEncodingDoesNot) {
  const FixedPoint fp;
  const size_t n = 1 << 16;
  // A smooth, small update: its encoding's bytes are far from uniform.
  const std::vector<float> x = RandomNormal(n, 3, 0.01F);
  std::vector<uint32_t> q(n);
  fp.Encode(x.data(), n, 1.0, q.data());
  EXPECT_GT(test_support::ChiSquareOfBytes(q.data(), n * 4),
            10 * test_support::kChiSquare255AtOneInAMillion);
  MaskStream stream;
  stream.Apply(RandomKey(), 1, MaskKind::kSelf, 0, q.data(), n, false);
  EXPECT_LT(test_support::ChiSquareOfBytes(q.data(), n * 4),
            test_support::kChiSquare255AtOneInAMillion);
}

}  // namespace
}  // namespace mt::secagg
