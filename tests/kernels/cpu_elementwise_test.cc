#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "kernels/cpu/cpu_backend.h"
#include "kernels/dropout_hash.h"
#include "tests/kernels/cpu_test_util.h"

namespace mt::kernels {
namespace {

using test_support::MakeBuffer;
using test_support::MakeIntBuffer;
using test_support::MaxRelativeError;
using test_support::RandomVector;
using test_support::ToDouble;
using test_support::ToHost;
using test_support::ToHostInt;

// Sizes below and above the point where ops split over the pool.
class CpuElementwiseTest : public ::testing::TestWithParam<int> {
 protected:
  int threads() const { return GetParam(); }
};

TEST_P(CpuElementwiseTest, AddBiasAndBiasGrad) {
  struct Shape {
    int outer, channels, inner;
  };
  for (Shape s : {Shape{1, 1, 1}, Shape{3, 5, 1}, Shape{64, 120, 1}, Shape{2, 3, 7},
                  Shape{64, 6, 784}, Shape{600, 100, 1}}) {
    SCOPED_TRACE(std::to_string(s.outer) + "x" + std::to_string(s.channels) + "x" +
                 std::to_string(s.inner));
    CpuBackend be(threads());
    const size_t n = size_t(s.outer) * s.channels * s.inner;
    const auto x = RandomVector(n, 31), bias = RandomVector(s.channels, 32);
    std::vector<double> want(n);
    std::vector<double> want_grad(s.channels, 0.0);
    for (size_t i = 0; i < n; ++i) {
      const int c = static_cast<int>((i / s.inner) % s.channels);
      want[i] = double(x[i]) + bias[c];
      want_grad[c] += x[i];
    }
    auto xb = MakeBuffer(be, x), bb = MakeBuffer(be, bias);
    be.AddBias(WholeOf(*xb), WholeOf(*bb), s.outer, s.channels, s.inner);
    EXPECT_LE(MaxRelativeError(ToHost(be, *xb), want), 1e-6);

    auto dx = MakeBuffer(be, x);
    auto db =
        MakeBuffer(be, std::vector<float>(s.channels, std::numeric_limits<float>::quiet_NaN()));
    be.BiasGrad(WholeOf(*dx), WholeOf(*db), s.outer, s.channels, s.inner);
    EXPECT_LE(MaxRelativeError(ToHost(be, *db), want_grad), test_support::kTolerance);
  }
}

TEST_P(CpuElementwiseTest, ReluForwardAndBackwardIncludingInPlace) {
  for (size_t n : {size_t{1}, size_t{17}, size_t{100000}}) {
    CpuBackend be(threads());
    auto x = RandomVector(n, 41);
    x[0] = 0.0f;  // the boundary: relu'(0) is taken as 0
    const auto dy = RandomVector(n, 42);
    std::vector<double> want_y(n), want_dx(n);
    for (size_t i = 0; i < n; ++i) {
      want_y[i] = x[i] > 0 ? x[i] : 0.0;
      want_dx[i] = x[i] > 0 ? dy[i] : 0.0;
    }
    auto xb = MakeBuffer(be, x), yb = be.Allocate(n), dyb = MakeBuffer(be, dy),
         dxb = be.Allocate(n);
    be.ReluForward(WholeOf(*xb), WholeOf(*yb));
    EXPECT_EQ(MaxRelativeError(ToHost(be, *yb), want_y), 0.0);
    be.ReluBackward(WholeOf(*yb), WholeOf(*dyb), WholeOf(*dxb));
    EXPECT_EQ(MaxRelativeError(ToHost(be, *dxb), want_dx), 0.0);
    be.ReluBackward(WholeOf(*yb), WholeOf(*dyb), WholeOf(*dyb));  // in place
    EXPECT_EQ(MaxRelativeError(ToHost(be, *dyb), want_dx), 0.0);
    be.ReluForward(WholeOf(*xb), WholeOf(*xb));  // in place
    EXPECT_EQ(MaxRelativeError(ToHost(be, *xb), want_y), 0.0);
  }
}

TEST_P(CpuElementwiseTest, DropoutKeepsAboutOneMinusRateAndScales) {
  CpuBackend be(threads());
  const size_t n = 200000;
  const auto x = RandomVector(n, 51, 0.5f, 1.5f);  // never zero, so a dropped entry is visible
  auto xb = MakeBuffer(be, x), yb = be.Allocate(n), mb = be.Allocate(n);
  for (float rate : {0.0f, 0.25f, 0.5f, 0.9f}) {
    SCOPED_TRACE(rate);
    const uint64_t seed = 1234;
    be.DropoutForward(WholeOf(*xb), WholeOf(*yb), WholeOf(*mb), rate, seed);
    const auto y = ToHost(be, *yb), m = ToHost(be, *mb);
    size_t kept = 0;
    for (size_t i = 0; i < n; ++i) {
      ASSERT_TRUE(m[i] == 0.0f || m[i] == 1.0f);
      ASSERT_EQ(m[i] == 1.0f, KeepAt(seed, i, rate))
          << "mask differs from the shared hash at " << i;
      ASSERT_FLOAT_EQ(y[i], m[i] * x[i] / (1.0f - rate));
      kept += m[i] == 1.0f;
    }
    const double frac = double(kept) / n;
    EXPECT_NEAR(frac, 1.0 - rate, 0.01);

    // The same seed gives the same mask; another seed a different one.
    be.DropoutForward(WholeOf(*xb), WholeOf(*yb), WholeOf(*mb), rate, seed);
    EXPECT_EQ(ToHost(be, *mb), m);
    if (rate > 0.0f) {
      be.DropoutForward(WholeOf(*xb), WholeOf(*yb), WholeOf(*mb), rate, seed + 1);
      EXPECT_NE(ToHost(be, *mb), m);
      be.DropoutForward(WholeOf(*xb), WholeOf(*yb), WholeOf(*mb), rate, seed);
    }

    const auto dy = RandomVector(n, 52);
    auto dyb = MakeBuffer(be, dy), dxb = be.Allocate(n);
    be.DropoutBackward(WholeOf(*dyb), WholeOf(*mb), rate, WholeOf(*dxb));
    const auto dx = ToHost(be, *dxb);
    for (size_t i = 0; i < n; ++i) ASSERT_FLOAT_EQ(dx[i], m[i] * dy[i] / (1.0f - rate));
  }
}

TEST(CpuElementwise, DropoutMaskIndexIsRelativeToTheView) {
  CpuBackend be(1);
  auto x = MakeBuffer(be, std::vector<float>(100, 1.0f));
  auto y = be.Allocate(100), m = be.Allocate(100);
  be.DropoutForward(WholeOf(*x).Slice(10, 50), WholeOf(*y).Slice(10, 50), WholeOf(*m).Slice(10, 50),
                    0.5f, 7);
  const auto mh = ToHost(be, *m);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(mh[10 + i] == 1.0f, KeepAt(7, i, 0.5f));
  for (int i = 0; i < 10; ++i) EXPECT_EQ(mh[i], 0.0f);  // untouched, still zero
}

TEST_P(CpuElementwiseTest, SoftmaxCrossEntropyIsStableForLargeLogits) {
  CpuBackend be(threads());
  const int n = 5, classes = 7;
  for (float scale : {1.0f, 100.0f, 1e4f, 1e30f}) {
    SCOPED_TRACE(scale);
    auto logits = RandomVector(n * classes, 61);
    for (float& v : logits) v *= scale;
    logits[3] = logits[2];  // a tie inside a row
    std::vector<int32_t> labels = {0, 6, 3, 2, 5};
    std::vector<double> want_d(n * classes);
    double want_loss = 0.0;
    for (int r = 0; r < n; ++r) {
      const float* row = logits.data() + r * classes;
      double mx = row[0];
      for (int c = 1; c < classes; ++c) mx = std::max(mx, double(row[c]));
      double sum = 0.0;
      for (int c = 0; c < classes; ++c) sum += std::exp(double(row[c]) - mx);
      want_loss += std::log(sum) - (double(row[labels[r]]) - mx);
      for (int c = 0; c < classes; ++c) {
        want_d[r * classes + c] = (std::exp(double(row[c]) - mx) / sum - (c == labels[r])) / n;
      }
    }
    auto lb = MakeBuffer(be, logits), yb = MakeIntBuffer(be, labels), db = be.Allocate(n * classes);
    const double loss =
        be.SoftmaxCrossEntropy(WholeOf(*lb), WholeOf(*yb), n, classes, WholeOf(*db));
    ASSERT_TRUE(std::isfinite(loss));
    EXPECT_NEAR(loss, want_loss, 1e-4 * std::max(1.0, std::fabs(want_loss)));
    EXPECT_LE(MaxRelativeError(ToHost(be, *db), want_d), test_support::kTolerance);
  }
}

TEST(CpuElementwise, SoftmaxCrossEntropyKnownValues) {
  CpuBackend be(1);
  // Uniform logits over 4 classes: loss log(4) per row, gradient (1/4 - onehot)/n.
  auto lb = MakeBuffer(be, std::vector<float>(8, 3.0f));
  auto yb = MakeIntBuffer(be, {1, 3});
  auto db = be.Allocate(8);
  EXPECT_NEAR(be.SoftmaxCrossEntropy(WholeOf(*lb), WholeOf(*yb), 2, 4, WholeOf(*db)),
              2.0 * std::log(4.0), 1e-6);
  const auto d = ToHost(be, *db);
  EXPECT_FLOAT_EQ(d[1], (0.25f - 1.0f) / 2);
  EXPECT_FLOAT_EQ(d[0], 0.25f / 2);
  EXPECT_FLOAT_EQ(d[7], (0.25f - 1.0f) / 2);
}

TEST(CpuElementwise, SoftmaxCrossEntropyRejectsLabelOutOfRange) {
  CpuBackend be(1);
  auto lb = MakeBuffer(be, std::vector<float>(4, 0.0f));
  auto yb = MakeIntBuffer(be, {0, 4});
  auto db = be.Allocate(4);
  EXPECT_THROW(be.SoftmaxCrossEntropy(WholeOf(*lb), WholeOf(*yb), 2, 2, WholeOf(*db)),
               std::out_of_range);
}

TEST(CpuElementwise, ArgmaxRowsPicksFirstMaximum) {
  CpuBackend be(1);
  auto lb = MakeBuffer(be, {0.1f, 0.9f, 0.9f, -1.0f,     // tie: first
                            -5.0f, -4.0f, -6.0f, -4.5f,  // all negative
                            7.0f, 1.0f, 2.0f, 3.0f});
  auto ob = be.Allocate(3);
  be.ArgmaxRows(WholeOf(*lb), 3, 4, WholeOf(*ob));
  EXPECT_EQ(ToHostInt(be, *ob), (std::vector<int32_t>{1, 1, 0}));
}

TEST_P(CpuElementwiseTest, AxpyScaleFillCopy) {
  for (size_t n : {size_t{3}, size_t{70001}}) {
    CpuBackend be(threads());
    const auto x = RandomVector(n, 71), y = RandomVector(n, 72);
    auto xb = MakeBuffer(be, x), yb = MakeBuffer(be, y);
    be.Axpy(-0.5f, WholeOf(*xb), WholeOf(*yb));
    std::vector<double> want(n);
    for (size_t i = 0; i < n; ++i) want[i] = y[i] - 0.5 * x[i];
    EXPECT_LE(MaxRelativeError(ToHost(be, *yb), want), 1e-6);

    be.Scale(3.0f, WholeOf(*xb));
    for (size_t i = 0; i < n; ++i) want[i] = 3.0 * x[i];
    EXPECT_LE(MaxRelativeError(ToHost(be, *xb), want), 1e-6);

    be.Fill(WholeOf(*xb).Slice(1, n - 2), 2.5f);
    const auto filled = ToHost(be, *xb);
    EXPECT_FLOAT_EQ(filled[0], 3.0f * x[0]);
    EXPECT_FLOAT_EQ(filled[n - 1], 3.0f * x[n - 1]);
    for (size_t i = 1; i + 1 < n; ++i) ASSERT_EQ(filled[i], 2.5f);

    auto zb = be.Allocate(n);
    be.Copy(WholeOf(*yb), WholeOf(*zb));
    EXPECT_EQ(ToHost(be, *zb), ToHost(be, *yb));
  }
}

INSTANTIATE_TEST_SUITE_P(Threads, CpuElementwiseTest, ::testing::Values(1, 3));

TEST(CpuBackendBasics, NameSupportsAllocateAndData) {
  CpuBackend be(2);
  EXPECT_EQ(be.Name(), "cpu");
  EXPECT_EQ(be.threads(), 2);
  EXPECT_EQ(be.SupportedOps(), OpSet::All())
      << "lacks " << (OpSet::All() - be.SupportedOps()).Names();
  EXPECT_TRUE(be.SupportedOps().Has(Op::kAdamUpdate));
  auto b = be.Allocate(1000);
  EXPECT_EQ(b->count(), 1000u);
  EXPECT_EQ(b->backend(), &be);
  float* p = CpuBackend::Data(WholeOf(*b));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % CpuBuffer::kAlignment, 0u);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(p[i], 0.0f);  // zero-filled
  EXPECT_EQ(CpuBackend::Data(WholeOf(*b).Slice(10, 5)), p + 10);
  EXPECT_EQ(CpuBackend::Data(View{}), nullptr);
  EXPECT_EQ(reinterpret_cast<float*>(CpuBackend::Int32Data(WholeOf(*b))), p);
  auto empty = be.Allocate(0);
  EXPECT_NE(CpuBackend::Data(WholeOf(*empty)), nullptr);

  std::vector<float> host = {1, 2, 3, 4};
  be.Upload(host.data(), WholeOf(*b).Slice(3, 4));
  std::vector<float> back(4);
  be.Download(WholeOf(*b).Slice(3, 4), back.data());
  EXPECT_EQ(back, host);
  EXPECT_EQ(p[2], 0.0f);
  EXPECT_EQ(p[7], 0.0f);
  be.Synchronize();
}

}  // namespace
}  // namespace mt::kernels
