// The Gaussian mechanism's two halves: clipping bounds the norm and leaves
// short vectors alone; the noise has the asked standard deviation, mean 0,
// no correlation between neighbours, and differs from draw to draw unless
// seeded.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/privacy/dp_clip.h"
#include "core/privacy/dp_noise.h"
#include "core/util/rng.h"

namespace mt::dp {
namespace {

std::vector<float> RandomVector(size_t n, uint64_t seed, float scale) {
  Rng rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = rng.Uniform(-scale, scale);
  return v;
}

TEST(DpClip, LongVectorsEndAtTheClipInTheirDirection) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    std::vector<float> v = RandomVector(61706, seed, 0.5f);
    const std::vector<float> before = v;
    const double norm = ClipToNorm(v.data(), v.size(), 1.5);
    ASSERT_GT(norm, 1.5);
    const double after = L2Norm(v.data(), v.size());
    EXPECT_LE(after, 1.5);
    EXPECT_GT(after, 1.5 * (1 - 1e-5));
    const double ratio = v[7] / before[7];
    for (size_t i = 0; i < v.size(); i += 997) EXPECT_NEAR(v[i], before[i] * ratio, 1e-6);
  }
}

TEST(DpClip, ShortVectorsStayAndBrokenOnesAreZeroed) {
  std::vector<float> v = {0.3f, -0.4f};
  EXPECT_NEAR(ClipToNorm(v.data(), 2, 1), 0.5, 1e-7);
  EXPECT_EQ(v, (std::vector<float>{0.3f, -0.4f}));
  std::vector<float> bad = {1, std::numeric_limits<float>::infinity(), 2};
  ClipToNorm(bad.data(), 3, 1);
  EXPECT_EQ(bad, (std::vector<float>{0, 0, 0}));
}

struct Moments {
  double mean = 0, sd = 0, lag1 = 0;
};
Moments Measure(const std::vector<float>& v) {
  Moments m;
  const auto n = static_cast<double>(v.size());
  for (float x : v) m.mean += x;
  m.mean /= n;
  for (float x : v) m.sd += (x - m.mean) * (x - m.mean);
  m.sd = std::sqrt(m.sd / n);
  for (size_t i = 1; i < v.size(); ++i) m.lag1 += (v[i] - m.mean) * (v[i - 1] - m.mean);
  m.lag1 /= n * m.sd * m.sd;
  return m;
}

TEST(DpNoise, HasTheAskedScaleMeanZeroAndNormalTails) {
  constexpr size_t n = 200001;  // odd: the last value's pair has no partner
  std::vector<float> v(n, 0.0f);
  GaussianNoise noise;  // the CSPRNG
  noise.Add(v.data(), n, 0.7);
  const Moments m = Measure(v);
  // Standard errors: mean 0.7 / sqrt(n) = 0.0016, sd 0.7 / sqrt(2n) = 0.0011.
  EXPECT_NEAR(m.mean, 0, 0.008);
  EXPECT_NEAR(m.sd, 0.7, 0.006);
  EXPECT_NEAR(m.lag1, 0, 0.012);  // Box-Muller's pairs are independent
  EXPECT_NE(v[n - 1], 0.0f);
  // Beyond 2 sigma: 4.55% of a normal sample (standard error 0.05%).
  size_t beyond = 0;
  for (float x : v) beyond += std::fabs(x) > 1.4f;
  EXPECT_NEAR(static_cast<double>(beyond) / n, 0.0455, 0.003);
}

TEST(DpNoise, TheCsprngNeverRepeatsAndASeedAlwaysDoes) {
  std::vector<float> a(1000, 0.0f), b(1000, 0.0f);
  GaussianNoise first, second;
  first.Add(a.data(), a.size(), 1);
  second.Add(b.data(), b.size(), 1);
  EXPECT_NE(a, b);
  std::vector<float> c(1000, 0.0f), d(1000, 0.0f);
  GaussianNoise(42).Add(c.data(), c.size(), 1);
  GaussianNoise(42).Add(d.data(), d.size(), 1);
  EXPECT_EQ(c, d);
}

}  // namespace
}  // namespace mt::dp
