#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <tuple>

#include "kernels/cpu/cpu_backend.h"
#include "tests/kernels/cpu_test_util.h"

namespace mt::kernels {
namespace {

using test_support::MakeBuffer;
using test_support::MaxRelativeError;
using test_support::RandomVector;
using test_support::ToHost;

// c = alpha * op(a) * op(b) + beta * c in double, straight from the definition.
std::vector<double> ReferenceGemm(bool ta, bool tb, int m, int n, int k, float alpha,
                                  const std::vector<float>& a, const std::vector<float>& b,
                                  float beta, const std::vector<float>& c) {
  std::vector<double> out(size_t(m) * n);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double s = 0.0;
      for (int p = 0; p < k; ++p) {
        const double av = ta ? a[size_t(p) * m + i] : a[size_t(i) * k + p];
        const double bv = tb ? b[size_t(j) * k + p] : b[size_t(p) * n + j];
        s += av * bv;
      }
      out[size_t(i) * n + j] =
          alpha * s + (beta == 0.0f ? 0.0 : beta * double(c[size_t(i) * n + j]));
    }
  }
  return out;
}

struct GemmCase {
  int m, n, k;
};

class CpuGemmTest : public ::testing::TestWithParam<std::tuple<int, GemmCase>> {};

TEST_P(CpuGemmTest, MatchesReferenceForAllTransposesAndBetas) {
  const int threads = std::get<0>(GetParam());
  const GemmCase gc = std::get<1>(GetParam());
  CpuBackend be(threads);
  uint32_t seed = 1;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      for (float beta : {0.0f, 1.0f, 0.5f}) {
        SCOPED_TRACE("ta=" + std::to_string(ta) + " tb=" + std::to_string(tb) +
                     " beta=" + std::to_string(beta));
        const float alpha = 0.75f;
        const auto a = RandomVector(size_t(gc.m) * gc.k, seed++);
        const auto b = RandomVector(size_t(gc.k) * gc.n, seed++);
        auto c0 = RandomVector(size_t(gc.m) * gc.n, seed++);
        // With beta == 0 the old contents must not be read: NaN would leak.
        if (beta == 0.0f) std::fill(c0.begin(), c0.end(), std::numeric_limits<float>::quiet_NaN());
        auto ab = MakeBuffer(be, a), bb = MakeBuffer(be, b), cb = MakeBuffer(be, c0);
        be.Gemm(ta, tb, gc.m, gc.n, gc.k, alpha, WholeOf(*ab), WholeOf(*bb), beta, WholeOf(*cb));
        const auto want = ReferenceGemm(ta, tb, gc.m, gc.n, gc.k, alpha, a, b, beta, c0);
        EXPECT_LE(MaxRelativeError(ToHost(be, *cb), want), test_support::kTolerance);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, CpuGemmTest,
    ::testing::Combine(::testing::Values(1, 3),
                       ::testing::Values(GemmCase{1, 1, 1}, GemmCase{3, 5, 7}, GemmCase{17, 33, 9},
                                         GemmCase{1, 130, 40}, GemmCase{64, 120, 400},
                                         GemmCase{120, 400, 64}, GemmCase{5, 300, 200},
                                         GemmCase{97, 61, 130})),
    [](const auto& info) {
      const GemmCase& c = std::get<1>(info.param);
      return "t" + std::to_string(std::get<0>(info.param)) + "_" + std::to_string(c.m) + "x" +
             std::to_string(c.n) + "x" + std::to_string(c.k);
    });

TEST(CpuGemm, ViewsWithOffsetsReadAndWriteOnlyTheirSlice) {
  CpuBackend be(1);
  const int m = 4, n = 3, k = 5;
  const auto a = RandomVector(m * k, 11), b = RandomVector(k * n, 12);
  std::vector<float> host(7 + m * k + k * n + m * n + 5, 42.0f);
  std::copy(a.begin(), a.end(), host.begin() + 7);
  std::copy(b.begin(), b.end(), host.begin() + 7 + m * k);
  auto buf = MakeBuffer(be, host);
  View whole = WholeOf(*buf);
  be.Gemm(false, false, m, n, k, 1.0f, whole.Slice(7, m * k), whole.Slice(7 + m * k, k * n), 0.0f,
          whole.Slice(7 + m * k + k * n, m * n));
  const auto got = ToHost(be, *buf);
  const auto want = ReferenceGemm(false, false, m, n, k, 1.0f, a, b, 0.0f, {});
  std::vector<float> c(got.begin() + 7 + m * k + k * n, got.begin() + 7 + m * k + k * n + m * n);
  EXPECT_LE(MaxRelativeError(c, want), test_support::kTolerance);
  for (int i = 0; i < 7; ++i) EXPECT_EQ(got[i], 42.0f);
  for (size_t i = got.size() - 5; i < got.size(); ++i) EXPECT_EQ(got[i], 42.0f);
}

}  // namespace
}  // namespace mt::kernels
