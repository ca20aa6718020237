// Batch normalisation, average and global average pooling, and clip on every
// backend (the CPU one on 1 and 3 threads, OpenCL where there is one) against
// naive double-precision references written from the definitions, PyTorch's
// running-statistics convention included.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "kernels/backend.h"
#include "tests/kernels/cpu_test_util.h"
#include "tests/support/test_backends.h"

namespace mt::kernels {
namespace {

using test_support::MaxRelativeError;
using test_support::RandomVector;

constexpr double kTol = 1e-4;  // relative to the largest reference value

struct BnReference {
  std::vector<double> y, mean, invstd, running_mean, running_var;
};

// Batch statistics of x [n][c][inner], PyTorch's running update.
BnReference ReferenceTraining(const BatchNormGeometry& g, const std::vector<float>& x,
                              const std::vector<float>& scale, const std::vector<float>& shift,
                              std::vector<float> rm, std::vector<float> rv) {
  BnReference r;
  r.y.resize(x.size());
  const double count = double(g.batch) * g.inner;
  for (int c = 0; c < g.channels; ++c) {
    double sum = 0;
    for (int n = 0; n < g.batch; ++n)
      for (int i = 0; i < g.inner; ++i) sum += x[(size_t(n) * g.channels + c) * g.inner + i];
    const double mean = sum / count;
    double sq = 0;
    for (int n = 0; n < g.batch; ++n)
      for (int i = 0; i < g.inner; ++i) {
        const double d = x[(size_t(n) * g.channels + c) * g.inner + i] - mean;
        sq += d * d;
      }
    const double var = sq / count;
    const double invstd = 1.0 / std::sqrt(var + g.epsilon);
    r.mean.push_back(mean);
    r.invstd.push_back(invstd);
    const double unbiased = count > 1 ? sq / (count - 1) : 0.0;
    r.running_mean.push_back((1 - g.momentum) * rm[c] + g.momentum * mean);
    r.running_var.push_back((1 - g.momentum) * rv[c] + g.momentum * unbiased);
    for (int n = 0; n < g.batch; ++n)
      for (int i = 0; i < g.inner; ++i) {
        const size_t at = (size_t(n) * g.channels + c) * g.inner + i;
        r.y[at] = (x[at] - mean) * invstd * scale[c] + shift[c];
      }
  }
  return r;
}

struct BnGradients {
  std::vector<double> d_x, d_scale, d_shift;
};

// d_x through the batch statistics (batch_stats) or through a fixed affine map.
BnGradients ReferenceBackward(const BatchNormGeometry& g, const std::vector<float>& x,
                              const std::vector<float>& d_y, const std::vector<float>& scale,
                              const std::vector<double>& mean, const std::vector<double>& invstd,
                              bool batch_stats) {
  BnGradients r;
  r.d_x.resize(x.size());
  const double count = double(g.batch) * g.inner;
  for (int c = 0; c < g.channels; ++c) {
    double s_dy = 0, s_dy_xhat = 0;
    for (int n = 0; n < g.batch; ++n)
      for (int i = 0; i < g.inner; ++i) {
        const size_t at = (size_t(n) * g.channels + c) * g.inner + i;
        s_dy += d_y[at];
        s_dy_xhat += d_y[at] * (x[at] - mean[c]) * invstd[c];
      }
    r.d_shift.push_back(s_dy);
    r.d_scale.push_back(s_dy_xhat);
    for (int n = 0; n < g.batch; ++n)
      for (int i = 0; i < g.inner; ++i) {
        const size_t at = (size_t(n) * g.channels + c) * g.inner + i;
        const double xhat = (x[at] - mean[c]) * invstd[c];
        r.d_x[at] = batch_stats
                        ? scale[c] * invstd[c] * (d_y[at] - s_dy / count - xhat * s_dy_xhat / count)
                        : d_y[at] * scale[c] * invstd[c];
      }
  }
  return r;
}

class BatchNormPool : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    be_ = mt::test_support::MakeTestBackend(GetParam());
    if (!be_) GTEST_SKIP() << mt::test_support::kNoOpenCl;
  }
  // A view of a new buffer holding `host` (or `n` zeros).
  View Up(const std::vector<float>& host) {
    owned_.push_back(test_support::MakeBuffer(*be_, host));
    return WholeOf(*owned_.back());
  }
  View Zeros(size_t n) { return Up(std::vector<float>(n, 0.0f)); }
  std::vector<float> Down(View v) {
    std::vector<float> h(v.count);
    be_->Download(v, h.data());
    return h;
  }
  void ExpectNear(View got, const std::vector<double>& want, const std::string& what) {
    EXPECT_LE(MaxRelativeError(Down(got), want), kTol) << what;
  }

  std::unique_ptr<Backend> be_;
  std::vector<std::unique_ptr<Buffer>> owned_;
};

std::vector<double> Doubles(const std::vector<float>& v) { return {v.begin(), v.end()}; }

const std::vector<BatchNormGeometry> kBnShapes = {
    {8, 16, 49, 1e-5f, 0.1f},  // MobileNet's last blocks
    {3, 4, 17, 1e-3f, 0.3f},   // odd sizes
    {64, 10, 1, 1e-5f, 0.1f},  // flat features
    {1, 5, 1, 1e-5f, 0.1f},    // one value per channel: no unbiased variance
};

std::string Name(const BatchNormGeometry& g) {
  return std::to_string(g.batch) + "x" + std::to_string(g.channels) + "x" + std::to_string(g.inner);
}

TEST_P(BatchNormPool, TrainingStepsMatchTheReferenceAndPyTorchsRunningUpdate) {
  for (const BatchNormGeometry& g : kBnShapes) {
    const size_t n = size_t(g.batch) * g.channels * g.inner, c = g.channels;
    const std::vector<float> scale = RandomVector(c, 2), shift = RandomVector(c, 3);
    std::vector<float> rm(c, 0.0f), rv(c, 1.0f);  // a fresh layer's
    const View scale_v = Up(scale), shift_v = Up(shift), rm_v = Up(rm), rv_v = Up(rv);
    const View mean_v = Zeros(c), invstd_v = Zeros(c), y_v = Zeros(n);
    for (int step = 0; step < 3; ++step) {
      const std::vector<float> x = RandomVector(n, 10 + step, -1.0f + step, 2.0f + 2 * step);
      const BnReference want = ReferenceTraining(g, x, scale, shift, rm, rv);
      be_->BatchNormForwardTraining(g, Up(x), scale_v, shift_v, rm_v, rv_v, mean_v, invstd_v, y_v);
      const std::string what = Name(g) + " step " + std::to_string(step);
      ExpectNear(y_v, want.y, what + " y");
      ExpectNear(mean_v, want.mean, what + " mean");
      ExpectNear(invstd_v, want.invstd, what + " invstd");
      ExpectNear(rm_v, want.running_mean, what + " running mean");
      ExpectNear(rv_v, want.running_var, what + " running var");
      rm = Down(rm_v);
      rv = Down(rv_v);
    }
  }
}

// A mean 500 times the spread over 200k values per channel: a float sum of
// squares minus the squared mean would lose every digit of the variance.
TEST_P(BatchNormPool, LargePlanesWithLargeMeansKeepTheirVariance) {
  const BatchNormGeometry g{16, 2, 112 * 112, 1e-5f, 0.1f};
  const size_t n = size_t(g.batch) * g.channels * g.inner;
  const std::vector<float> x = RandomVector(n, 5, 49.9f, 50.1f);
  const std::vector<float> scale(2, 1.0f), shift(2, 0.0f), rm(2, 0.0f), rv(2, 1.0f);
  const BnReference want = ReferenceTraining(g, x, scale, shift, rm, rv);
  const View mean_v = Zeros(2), invstd_v = Zeros(2), y_v = Zeros(n), rv_v = Up(rv);
  be_->BatchNormForwardTraining(g, Up(x), Up(scale), Up(shift), Up(rm), rv_v, mean_v, invstd_v,
                                y_v);
  ExpectNear(mean_v, want.mean, "mean");
  ExpectNear(invstd_v, want.invstd, "invstd");
  ExpectNear(rv_v, want.running_var, "running var");
  ExpectNear(y_v, want.y, "y");
}

TEST_P(BatchNormPool, InferenceUsesTheRunningStatistics) {
  for (const BatchNormGeometry& g : kBnShapes) {
    const size_t n = size_t(g.batch) * g.channels * g.inner, c = g.channels;
    const std::vector<float> x = RandomVector(n, 1, -2.0f, 3.0f), scale = RandomVector(c, 2),
                             shift = RandomVector(c, 3), rm = RandomVector(c, 4),
                             rv = RandomVector(c, 5, 0.1f, 3.0f);
    std::vector<double> y(n), invstd(c);
    for (size_t i = 0; i < n; ++i) {
      const size_t ch = (i / g.inner) % c;
      invstd[ch] = 1.0 / std::sqrt(double(rv[ch]) + g.epsilon);
      y[i] = (x[i] - double(rm[ch])) * invstd[ch] * scale[ch] + shift[ch];
    }
    const View invstd_v = Zeros(c), y_v = Zeros(n), rm_v = Up(rm), rv_v = Up(rv);
    be_->BatchNormForwardInference(g, Up(x), Up(scale), Up(shift), rm_v, rv_v, invstd_v, y_v);
    ExpectNear(y_v, y, Name(g) + " y");
    ExpectNear(invstd_v, invstd, Name(g) + " invstd");
    EXPECT_EQ(Down(rm_v), rm) << "inference must not move the running statistics";
    EXPECT_EQ(Down(rv_v), rv);
  }
}

TEST_P(BatchNormPool, BackwardMatchesTheReference) {
  for (const BatchNormGeometry& g : kBnShapes) {
    const size_t n = size_t(g.batch) * g.channels * g.inner, c = g.channels;
    const std::vector<float> x = RandomVector(n, 1, 0.0f, 3.0f), d_y = RandomVector(n, 6),
                             scale = RandomVector(c, 2), shift = RandomVector(c, 3);
    const std::vector<float> rm = RandomVector(c, 4), rv = RandomVector(c, 5, 0.1f, 3.0f);
    const View x_v = Up(x), d_y_v = Up(d_y), scale_v = Up(scale), shift_v = Up(shift);
    for (const bool batch_stats : {true, false}) {
      const View mean_v = batch_stats ? Zeros(c) : Up(rm), invstd_v = Zeros(c);
      std::vector<double> mean = Doubles(rm), invstd(c);
      for (size_t ch = 0; ch < c; ++ch) invstd[ch] = 1.0 / std::sqrt(double(rv[ch]) + g.epsilon);
      if (batch_stats) {
        const BnReference fwd = ReferenceTraining(g, x, scale, shift, rm, rv);
        mean = fwd.mean;
        invstd = fwd.invstd;
        be_->BatchNormForwardTraining(g, x_v, scale_v, shift_v, Up(rm), Up(rv), mean_v, invstd_v,
                                      Zeros(n));
      } else {
        be_->BatchNormForwardInference(g, x_v, scale_v, shift_v, mean_v, Up(rv), invstd_v,
                                       Zeros(n));
      }
      const BnGradients want = ReferenceBackward(g, x, d_y, scale, mean, invstd, batch_stats);
      const std::string what = Name(g) + (batch_stats ? " batch stats" : " running stats");
      const View d_x = Zeros(n), d_scale = Zeros(c), d_shift = Zeros(c);
      be_->BatchNormBackward(g, x_v, d_y_v, scale_v, mean_v, invstd_v, batch_stats, d_x, d_scale,
                             d_shift);
      ExpectNear(d_x, want.d_x, what + " d_x");
      ExpectNear(d_scale, want.d_scale, what + " d_scale");
      ExpectNear(d_shift, want.d_shift, what + " d_shift");
      // A frozen layer: only d_x, its parameter gradients left alone.
      const View d_x_only = Zeros(n);
      be_->BatchNormBackward(g, x_v, d_y_v, scale_v, mean_v, invstd_v, batch_stats, d_x_only,
                             View{}, View{});
      ExpectNear(d_x_only, want.d_x, what + " d_x alone");
    }
  }
}

TEST_P(BatchNormPool, AveragePoolingMatchesTheReference) {
  // {batch, channels, in_h, in_w, size, stride}: tiling, uncovered edges, overlaps.
  for (const PoolGeometry g : std::vector<PoolGeometry>{
           {2, 3, 8, 8, 2, 2}, {2, 3, 7, 9, 2, 2}, {1, 2, 9, 9, 3, 2}, {2, 2, 6, 7, 3, 1}}) {
    const size_t in_n = size_t(g.batch) * g.in_size(), out_n = size_t(g.batch) * g.out_size();
    const int oh = g.out_h(), ow = g.out_w();
    const std::vector<float> x = RandomVector(in_n, 1), d_out = RandomVector(out_n, 2);
    std::vector<double> y(out_n, 0.0), d_in(in_n, 0.0);
    const double area = g.size * g.size;
    for (int p = 0; p < g.batch * g.channels; ++p)
      for (int oy = 0; oy < oh; ++oy)
        for (int ox = 0; ox < ow; ++ox) {
          const size_t o = (size_t(p) * oh + oy) * ow + ox;
          for (int ky = 0; ky < g.size; ++ky)
            for (int kx = 0; kx < g.size; ++kx) {
              const size_t i =
                  (size_t(p) * g.in_h + oy * g.stride + ky) * g.in_w + ox * g.stride + kx;
              y[o] += x[i] / area;
              d_in[i] += d_out[o] / area;
            }
        }
    const View y_v = Zeros(out_n), d_in_v = Up(RandomVector(in_n, 3));  // garbage: overwritten
    be_->AvgPoolForward(g, Up(x), y_v);
    be_->AvgPoolBackward(g, Up(d_out), d_in_v);
    const std::string what = std::to_string(g.in_h) + "x" + std::to_string(g.in_w) + " size " +
                             std::to_string(g.size) + " stride " + std::to_string(g.stride);
    ExpectNear(y_v, y, what + " forward");
    ExpectNear(d_in_v, d_in, what + " backward");
  }
}

TEST_P(BatchNormPool, GlobalAveragePoolingMatchesTheReference) {
  for (const int inner : {1, 49, 112 * 112}) {
    const int planes = 6;
    const size_t n = size_t(planes) * inner;
    const std::vector<float> x = RandomVector(n, 1, 0.5f, 1.5f), d_out = RandomVector(planes, 2);
    std::vector<double> y(planes, 0.0), d_in(n);
    for (size_t i = 0; i < n; ++i) {
      y[i / inner] += double(x[i]) / inner;
      d_in[i] = double(d_out[i / inner]) / inner;
    }
    const View y_v = Zeros(planes), d_in_v = Zeros(n);
    be_->GlobalAvgPoolForward(Up(x), y_v, planes, inner);
    be_->GlobalAvgPoolBackward(Up(d_out), d_in_v, planes, inner);
    ExpectNear(y_v, y, "inner " + std::to_string(inner) + " forward");
    ExpectNear(d_in_v, d_in, "inner " + std::to_string(inner) + " backward");
  }
}

TEST_P(BatchNormPool, ClipIsReLU6AndPassesGradientsStrictlyInside) {
  const size_t n = 70001;
  std::vector<float> x = RandomVector(n, 1, -9.0f, 9.0f);
  x[0] = 0.0f;  // the edges themselves pass no gradient
  x[1] = 6.0f;
  x[2] = -0.0f;
  const std::vector<float> d_out = RandomVector(n, 2);
  std::vector<float> y(n), d_in(n);
  for (size_t i = 0; i < n; ++i) {
    y[i] = std::min(std::max(x[i], 0.0f), 6.0f);
    d_in[i] = y[i] > 0.0f && y[i] < 6.0f ? d_out[i] : 0.0f;
  }
  const View y_v = Zeros(n), d_v = Up(d_out), d_in_v = Zeros(n);
  be_->ClipForward(Up(x), y_v, 0.0f, 6.0f);
  EXPECT_EQ(Down(y_v), y);
  be_->ClipBackward(y_v, d_v, d_in_v, 0.0f, 6.0f);
  EXPECT_EQ(Down(d_in_v), d_in);
  be_->ClipBackward(y_v, d_v, d_v, 0.0f, 6.0f);  // in place, as ReLU6 runs
  EXPECT_EQ(Down(d_v), d_in);
  // In place forward too.
  const View x_v = Up(x);
  be_->ClipForward(x_v, x_v, 0.0f, 6.0f);
  EXPECT_EQ(Down(x_v), y);
}

// Threads split channels or planes, never a sum: 1 and 3 threads agree bit for bit.
TEST(BatchNormPoolCpu, ResultsDoNotDependOnTheThreadCount) {
  const BatchNormGeometry g{16, 12, 196, 1e-5f, 0.1f};
  const size_t n = size_t(g.batch) * g.channels * g.inner, c = g.channels;
  std::vector<std::vector<float>> results;
  for (const int threads : {1, 3}) {
    CpuBackend be(threads);
    auto x = test_support::MakeBuffer(be, RandomVector(n, 1));
    auto scale = test_support::MakeBuffer(be, RandomVector(c, 2));
    auto shift = test_support::MakeBuffer(be, RandomVector(c, 3));
    auto stats = test_support::MakeBuffer(be, std::vector<float>(4 * c, 1.0f));
    auto y = be.Allocate(n), d_x = be.Allocate(n), d_p = be.Allocate(2 * c);
    auto d_y = test_support::MakeBuffer(be, RandomVector(n, 4));
    const View s = WholeOf(*stats);
    be.BatchNormForwardTraining(g, WholeOf(*x), WholeOf(*scale), WholeOf(*shift), s.Slice(0, c),
                                s.Slice(c, c), s.Slice(2 * c, c), s.Slice(3 * c, c), WholeOf(*y));
    be.BatchNormBackward(g, WholeOf(*x), WholeOf(*d_y), WholeOf(*scale), s.Slice(2 * c, c),
                         s.Slice(3 * c, c), true, WholeOf(*d_x), WholeOf(*d_p).Slice(0, c),
                         WholeOf(*d_p).Slice(c, c));
    std::vector<float> all = test_support::ToHost(be, *y);
    for (Buffer* b : {d_x.get(), d_p.get(), stats.get()}) {
      const std::vector<float> h = test_support::ToHost(be, *b);
      all.insert(all.end(), h.begin(), h.end());
    }
    results.push_back(all);
  }
  EXPECT_EQ(results[0], results[1]);
}

INSTANTIATE_TEST_SUITE_P(Backends, BatchNormPool, ::testing::Values("cpu1", "cpu3", "opencl"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace mt::kernels
