#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/cpu/cpu_backend.h"
#include "tests/kernels/cpu_test_util.h"

namespace mt::kernels {
namespace {

using test_support::MakeBuffer;
using test_support::MaxRelativeError;
using test_support::RandomVector;
using test_support::ToHost;

// Values worked out by hand (PyTorch's update rules) for one parameter.
TEST(CpuOptimizer, SgdMomentumWeightDecayHandComputed) {
  CpuBackend be(1);
  auto p = MakeBuffer(be, {1.0f}), g = MakeBuffer(be, {0.5f}), v = MakeBuffer(be, {0.0f});
  const SgdHyper h{0.1f, 0.9f, 0.01f};
  // g' = g + wd p; v = 0.9 v + g'; p -= lr v
  const float want[] = {0.949f, 0.852151f, 0.714134749f};
  for (float w : want) {
    be.SgdUpdate(h, WholeOf(*p), WholeOf(*g), WholeOf(*v));
    EXPECT_NEAR(ToHost(be, *p)[0], w, 1e-6);
  }
}

TEST(CpuOptimizer, SgdWithoutMomentumNeedsNoVelocity) {
  CpuBackend be(1);
  auto p = MakeBuffer(be, {1.0f}), g = MakeBuffer(be, {0.5f});
  const SgdHyper h{0.1f, 0.0f, 0.01f};
  be.SgdUpdate(h, WholeOf(*p), WholeOf(*g), View{});
  EXPECT_NEAR(ToHost(be, *p)[0], 0.949f, 1e-6);
  const float neg = -0.25f;
  be.Upload(&neg, WholeOf(*g));
  be.SgdUpdate(h, WholeOf(*p), WholeOf(*g), View{});
  EXPECT_NEAR(ToHost(be, *p)[0], 0.973051f, 1e-6);
}

TEST(CpuOptimizer, AdamHandComputed) {
  CpuBackend be(1);
  auto p = MakeBuffer(be, {1.0f}), g = be.Allocate(1), m = be.Allocate(1), v = be.Allocate(1);
  AdamHyper h;
  h.lr = 0.1f;
  h.weight_decay = 0.1f;
  const float grads[] = {0.5f, -0.2f, 0.3f};
  const float want[] = {0.9000000016666666f, 0.8475190629593702f, 0.7791121607663536f};
  for (int t = 0; t < 3; ++t) {
    h.step = t + 1;
    be.Upload(&grads[t], WholeOf(*g));
    be.AdamUpdate(h, WholeOf(*p), WholeOf(*g), WholeOf(*m), WholeOf(*v));
    EXPECT_NEAR(ToHost(be, *p)[0], want[t], 1e-6) << "step " << h.step;
  }
}

// Many elements (the pool splits them) against a double-precision loop.
class CpuOptimizerThreads : public ::testing::TestWithParam<int> {};

TEST_P(CpuOptimizerThreads, SgdAndAdamMatchReferenceOverSteps) {
  CpuBackend be(GetParam());
  const size_t n = 100003;
  const auto p0 = RandomVector(n, 81);
  std::vector<double> ps(p0.begin(), p0.end()), vs(n, 0.0);
  std::vector<double> pa(p0.begin(), p0.end()), ma(n, 0.0), va(n, 0.0);
  auto psb = MakeBuffer(be, p0), vsb = be.Allocate(n);
  auto pab = MakeBuffer(be, p0), mab = be.Allocate(n), vab = be.Allocate(n);
  const SgdHyper sh{0.05f, 0.9f, 1e-3f};
  AdamHyper ah;
  ah.lr = 0.01f;
  ah.weight_decay = 1e-2f;
  for (int step = 1; step <= 4; ++step) {
    const auto g = RandomVector(n, 90 + step);
    auto gb = MakeBuffer(be, g);
    be.SgdUpdate(sh, WholeOf(*psb), WholeOf(*gb), WholeOf(*vsb));
    ah.step = step;
    be.AdamUpdate(ah, WholeOf(*pab), WholeOf(*gb), WholeOf(*mab), WholeOf(*vab));
    const double c1 = 1.0 - std::pow(0.9, step), c2 = 1.0 - std::pow(0.999, step);
    for (size_t i = 0; i < n; ++i) {
      const double gs = g[i] + 1e-3 * ps[i];
      vs[i] = 0.9 * vs[i] + gs;
      ps[i] -= 0.05 * vs[i];
      const double ga = g[i] + 1e-2 * pa[i];
      ma[i] = 0.9 * ma[i] + 0.1 * ga;
      va[i] = 0.999 * va[i] + 0.001 * ga * ga;
      pa[i] -= 0.01 * (ma[i] / c1) / (std::sqrt(va[i] / c2) + 1e-8);
    }
    EXPECT_LE(MaxRelativeError(ToHost(be, *psb), ps), test_support::kTolerance)
        << "sgd step " << step;
    EXPECT_LE(MaxRelativeError(ToHost(be, *pab), pa), test_support::kTolerance)
        << "adam step " << step;
  }
}

TEST_P(CpuOptimizerThreads, UpdatesAreBitIdenticalAcrossThreadCounts) {
  const size_t n = 70001;
  const auto p0 = RandomVector(n, 101), g = RandomVector(n, 102);
  CpuBackend one(1), many(GetParam());
  std::vector<std::vector<float>> results;
  for (CpuBackend* be : {&one, &many}) {
    auto p = MakeBuffer(*be, p0), gb = MakeBuffer(*be, g);
    auto m = be->Allocate(n), v = be->Allocate(n), vel = be->Allocate(n);
    AdamHyper h;
    h.weight_decay = 0.01f;
    for (int s = 1; s <= 3; ++s) {
      h.step = s;
      be->AdamUpdate(h, WholeOf(*p), WholeOf(*gb), WholeOf(*m), WholeOf(*v));
      be->SgdUpdate({0.1f, 0.9f, 0.01f}, WholeOf(*p), WholeOf(*gb), WholeOf(*vel));
    }
    results.push_back(ToHost(*be, *p));
  }
  for (float x : results[0]) ASSERT_TRUE(std::isfinite(x));
  EXPECT_EQ(results[0], results[1]);
}

INSTANTIATE_TEST_SUITE_P(Threads, CpuOptimizerThreads, ::testing::Values(1, 3));

}  // namespace
}  // namespace mt::kernels
