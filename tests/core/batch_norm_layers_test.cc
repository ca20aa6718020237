// MobileNet's layers on every backend (the CPU one on 1 and 3 threads,
// OpenCL where there is one): numerical gradient checks of BatchNorm2D
// (training, frozen, flat input), AvgPool2D, GlobalAvgPool and ReLU6, and
// batch norm's running statistics against PyTorch's formula computed by hand,
// and batch norm's replay (recomputation) against its training pass.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/layers/avg_pool2d.h"
#include "core/layers/batch_norm2d.h"
#include "core/layers/global_avg_pool.h"
#include "core/layers/relu6.h"
#include "kernels/batch_norm_clip.h"
#include "kernels/batch_norm_replay.h"
#include "tests/support/backend_test.h"
#include "tests/support/gradient_check.h"
#include "tests/support/test_backends.h"

namespace mt {
namespace {

using test_support::CheckLayerGradients;
using test_support::RandomVector;

class BatchNormLayers : public test_support::BackendTest {
 protected:
  // Sets bn up for `in` on this backend with fresh running statistics
  // (mean 0, variance 1) in a buffer of their own.
  void Prepare(BatchNorm2D& bn, const Shape& in) {
    bn.set_backend(&backend());
    bn.Setup(in);
    std::vector<float> host(bn.RunningStatCount());
    bn.InitRunningStats(host.data());
    stats_ = backend().Allocate(host.size());
    backend().Upload(host.data(), kernels::WholeOf(*stats_));
    bn.BindRunningStats(kernels::WholeOf(*stats_));
  }
  std::vector<float> Stats() {
    std::vector<float> h(stats_->count());
    backend().Download(kernels::WholeOf(*stats_), h.data());
    return h;
  }

  std::unique_ptr<kernels::Buffer> stats_;
};

// Statistics per channel of x [n][c][inner], as PyTorch's BatchNorm2d keeps them.
struct ChannelStats {
  std::vector<double> mean, biased_var, unbiased_var;
};

ChannelStats StatsOf(const std::vector<float>& x, int n, int c, int inner) {
  ChannelStats s{std::vector<double>(c), std::vector<double>(c), std::vector<double>(c)};
  const double count = double(n) * inner;
  for (int ch = 0; ch < c; ++ch) {
    double sum = 0, sq = 0;
    for (int b = 0; b < n; ++b)
      for (int i = 0; i < inner; ++i) sum += x[(size_t(b) * c + ch) * inner + i];
    s.mean[ch] = sum / count;
    for (int b = 0; b < n; ++b)
      for (int i = 0; i < inner; ++i) {
        const double d = x[(size_t(b) * c + ch) * inner + i] - s.mean[ch];
        sq += d * d;
      }
    s.biased_var[ch] = sq / count;
    s.unbiased_var[ch] = sq / (count - 1);
  }
  return s;
}

TEST_P(BatchNormLayers, BatchNormTrainingGradientsWithRespectToInputScaleAndShift) {
  BatchNorm2D bn(0.0f, 0.0f);
  Prepare(bn, Shape{3, 4, 5});
  // Inputs away from zero mean, as after a conv with a bias.
  CheckLayerGradients(bn, Shape{3, 4, 5}, 3, backend(), RandomVector(3 * 3 * 20, 21, 0.5f, 2.5f));
}

TEST_P(BatchNormLayers, BatchNormOnFlatFeatures) {
  BatchNorm2D bn(1e-3f, 0.2f);
  Prepare(bn, Shape{6});
  // Few values per channel make the map strongly curved: a smaller step.
  test_support::CheckOptions o;
  o.eps = 4e-3f;
  CheckLayerGradients(bn, Shape{6}, 16, backend(), RandomVector(16 * 6, 22, -2.0f, 2.0f), o);
}

// A frozen layer in training is the affine map of its running statistics:
// the input gradient matches a central difference, its parameter gradients
// are left as they were and its running statistics do not move.
TEST_P(BatchNormLayers, FrozenBatchNormIsAFixedAffineMap) {
  const Shape sample{2, 3, 3};
  const int batch = 4, c = 2, inner = 9;
  const size_t n = size_t(batch) * c * inner;
  BatchNorm2D bn(0.0f, 0.0f);
  Prepare(bn, sample);
  bn.set_frozen(true);
  const std::vector<float> stats = {0.3f, -0.2f, 1.5f, 0.6f};  // mean [2] then var [2]
  backend().Upload(stats.data(), kernels::WholeOf(*stats_));
  const std::vector<float> params = {1.2f, -0.7f, 0.1f, 0.4f};  // scale [2] then shift [2]
  auto p = backend().Allocate(4), g = backend().Allocate(4);
  backend().Upload(params.data(), kernels::WholeOf(*p));
  const std::vector<float> sentinel(4, 0.0f);
  backend().Upload(sentinel.data(), kernels::WholeOf(*g));
  bn.BindParams(kernels::WholeOf(*p), kernels::WholeOf(*g));
  bn.Reshape(batch);

  auto in_b = backend().Allocate(n), out_b = backend().Allocate(n), d_out_b = backend().Allocate(n),
       d_in_b = backend().Allocate(n);
  const Tensor in{sample.WithBatch(batch), kernels::WholeOf(*in_b)};
  const Tensor out{in.shape, kernels::WholeOf(*out_b)};
  const Tensor d_out{in.shape, kernels::WholeOf(*d_out_b)};
  const Tensor d_in{in.shape, kernels::WholeOf(*d_in_b)};
  std::vector<float> x = RandomVector(n, 23, -2.0f, 2.0f);
  const std::vector<float> r = RandomVector(n, 24);
  std::vector<float> y(n);
  auto objective = [&]() {
    backend().Upload(x.data(), in.view);
    bn.Forward(in, out, ForwardContext{true, 0});
    backend().Download(out.view, y.data());
    double s = 0;
    for (size_t i = 0; i < n; ++i) s += double(y[i]) * r[i];
    return s;
  };
  objective();
  for (size_t i = 0; i < n; ++i) {
    const int ch = int(i / inner) % c;
    const double want =
        (x[i] - stats[ch]) / std::sqrt(stats[c + ch] + 1e-5) * params[ch] + params[c + ch];
    ASSERT_NEAR(y[i], want, 1e-5) << i;
  }
  backend().Upload(r.data(), d_out.view);
  bn.Backward(in, out, d_out, d_in);
  std::vector<float> analytic(n), grads(4);
  backend().Download(d_in.view, analytic.data());
  backend().Download(kernels::WholeOf(*g), grads.data());
  EXPECT_EQ(grads, sentinel) << "a frozen layer's parameter gradients stay zero";
  std::vector<float> x0 = x;
  test_support::CompareDerivatives("frozen batchnorm d_input", x0, analytic,
                                   [&](const std::vector<float>& v) { x = v; }, objective, {});
  EXPECT_EQ(Stats(), stats) << "a frozen layer's running statistics do not move";
}

// Three training steps move the running statistics by PyTorch's rule
// (running = (1 - m) running + m batch, the variance unbiased), then
// evaluation normalises with them and leaves them alone.
TEST_P(BatchNormLayers, RunningStatisticsFollowPyTorchAndServeEvaluation) {
  const int batch = 5, c = 3, h = 4, w = 2, inner = h * w;
  const size_t n = size_t(batch) * c * inner;
  const float momentum = 0.25f, eps = 1e-4f;
  BatchNorm2D bn(eps, momentum);
  Prepare(bn, Shape{c, h, w});
  auto p = backend().Allocate(2 * c), g = backend().Allocate(2 * c);
  std::vector<float> params(2 * c);
  Rng rng(1);
  bn.InitParams(rng, params.data());
  EXPECT_EQ(params, std::vector<float>({1, 1, 1, 0, 0, 0}));
  EXPECT_EQ(Stats(), std::vector<float>({0, 0, 0, 1, 1, 1}));
  params = {0.5f, 2.0f, -1.0f, 0.1f, 0.2f, 0.3f};
  backend().Upload(params.data(), kernels::WholeOf(*p));
  bn.BindParams(kernels::WholeOf(*p), kernels::WholeOf(*g));
  bn.Reshape(batch);
  auto in_b = backend().Allocate(n), out_b = backend().Allocate(n);
  const Tensor in{Shape{c, h, w}.WithBatch(batch), kernels::WholeOf(*in_b)};
  const Tensor out{in.shape, kernels::WholeOf(*out_b)};

  std::vector<double> rm(c, 0.0), rv(c, 1.0);
  std::vector<float> y(n);
  for (int step = 0; step < 3; ++step) {
    const std::vector<float> x = RandomVector(n, 30 + step, -1.0f + step, 3.0f + step);
    backend().Upload(x.data(), in.view);
    bn.Forward(in, out, ForwardContext{true, 0});
    const ChannelStats s = StatsOf(x, batch, c, inner);
    for (int ch = 0; ch < c; ++ch) {
      rm[ch] = (1 - momentum) * rm[ch] + momentum * s.mean[ch];
      rv[ch] = (1 - momentum) * rv[ch] + momentum * s.unbiased_var[ch];
    }
    backend().Download(out.view, y.data());
    for (size_t i = 0; i < n; ++i) {
      const int ch = int(i / inner) % c;
      const double want =
          (x[i] - s.mean[ch]) / std::sqrt(s.biased_var[ch] + eps) * params[ch] + params[c + ch];
      ASSERT_NEAR(y[i], want, 1e-4) << "step " << step << " at " << i;
    }
  }
  const std::vector<float> after_training = Stats();
  for (int ch = 0; ch < c; ++ch) {
    EXPECT_NEAR(after_training[ch], rm[ch], 1e-5) << "running mean " << ch;
    EXPECT_NEAR(after_training[c + ch], rv[ch], 1e-5 * rv[ch]) << "running var " << ch;
  }

  const std::vector<float> x = RandomVector(n, 40, -2.0f, 2.0f);
  backend().Upload(x.data(), in.view);
  bn.Forward(in, out, ForwardContext{false, 0});
  backend().Download(out.view, y.data());
  for (size_t i = 0; i < n; ++i) {
    const int ch = int(i / inner) % c;
    const double want =
        (x[i] - after_training[ch]) / std::sqrt(after_training[c + ch] + eps) * params[ch] +
        params[c + ch];
    ASSERT_NEAR(y[i], want, 1e-4) << "evaluation at " << i;
  }
  EXPECT_EQ(Stats(), after_training) << "evaluation must not move the running statistics";
}

// A replay (recomputation) writes the training pass's output bit for bit
// and leaves the running and saved statistics as they are, clipped or not:
// in one pass where the backend has kernels::kBatchNormReplay, and with
// momentum 0 on the CPU backend without it.
void ExpectReplayRepeatsTraining(kernels::Backend& be, bool clip) {
  SCOPED_TRACE(be.Name() + (clip ? " relu6" : " no clip"));
  const int batch = 4, c = 5, h = 6, w = 6;
  const size_t n = size_t(batch) * c * h * w;
  BatchNorm2D bn(0.0f, 0.5f);
  if (clip) {
    if (!be.SupportedOps().Contains(kernels::BatchNormClipOps())) return;
    bn.FuseClip(0.0f, 6.0f);
  }
  bn.set_backend(&be);
  bn.Setup(Shape{c, h, w});
  auto params = be.Allocate(2 * c), grads = be.Allocate(2 * c), stats = be.Allocate(2 * c);
  const std::vector<float> p = RandomVector(2 * c, 51, -4.0f, 4.0f);
  be.Upload(p.data(), kernels::WholeOf(*params));
  std::vector<float> s(2 * c);
  bn.InitRunningStats(s.data());
  be.Upload(s.data(), kernels::WholeOf(*stats));
  bn.BindParams(kernels::WholeOf(*params), kernels::WholeOf(*grads));
  bn.BindRunningStats(kernels::WholeOf(*stats));
  bn.Reshape(batch);
  auto in_b = be.Allocate(n), out_b = be.Allocate(n), again_b = be.Allocate(n);
  const Tensor in{Shape{c, h, w}.WithBatch(batch), kernels::WholeOf(*in_b)};
  const Tensor out{in.shape, kernels::WholeOf(*out_b)}, again{in.shape, kernels::WholeOf(*again_b)};
  const std::vector<float> x = RandomVector(n, 52, 1.0f, 4.0f);
  be.Upload(x.data(), in.view);
  auto download = [&be](kernels::View v) {
    std::vector<float> h(v.count);
    be.Download(v, h.data());
    return h;
  };
  bn.Forward(in, out, ForwardContext{true, 7});
  const std::vector<float> stats_after_training = download(kernels::WholeOf(*stats));
  ForwardContext replay{true, 7};
  replay.replay = true;
  bn.Forward(in, again, replay);
  EXPECT_EQ(download(again.view), download(out.view));
  EXPECT_EQ(download(kernels::WholeOf(*stats)), stats_after_training);
  EXPECT_NE(stats_after_training, s) << "the training pass moved no statistics";
  // The backward pass after the replay is the one after the training pass.
  const std::vector<float> dy = RandomVector(n, 53);
  be.Upload(dy.data(), again.view);
  bn.Backward(in, out, again, out);
  const std::vector<float> d_x = download(out.view), d_params = download(kernels::WholeOf(*grads));
  bn.Forward(in, out, ForwardContext{true, 7});
  be.Upload(s.data(), kernels::WholeOf(*stats));
  be.Upload(dy.data(), again.view);
  bn.Backward(in, out, again, out);
  EXPECT_EQ(download(out.view), d_x);
  EXPECT_EQ(download(kernels::WholeOf(*grads)), d_params);
}

TEST_P(BatchNormLayers, ReplayRepeatsTheTrainingPass) {
  EXPECT_TRUE(backend().SupportedOps().Has(kernels::kBatchNormReplay.op()));
  for (bool clip : {false, true}) ExpectReplayRepeatsTraining(backend(), clip);
}

TEST(BatchNormReplayFallback, WithoutTheOpReplaysWithMomentumZero) {
  const auto be = test_support::MakeCpuWithout({kernels::kBatchNormReplay.op()}, "no_replay");
  for (bool clip : {false, true}) ExpectReplayRepeatsTraining(*be, clip);
}

TEST_P(BatchNormLayers, AvgPool) {
  AvgPool2D pool(2, 0);  // stride 0: the window's size
  CheckLayerGradients(pool, Shape{3, 6, 6}, 2, backend(), RandomVector(2 * 3 * 36, 25));
}

TEST_P(BatchNormLayers, AvgPoolOverlappingOddInput) {
  AvgPool2D pool(3, 2);
  CheckLayerGradients(pool, Shape{2, 7, 5}, 2, backend(), RandomVector(2 * 2 * 35, 26));
}

TEST_P(BatchNormLayers, GlobalAvgPool) {
  GlobalAvgPool pool;
  CheckLayerGradients(pool, Shape{4, 3, 5}, 3, backend(), RandomVector(3 * 60, 27));
}

// Inputs on both sides of both kinks; the few within eps of 0 or 6 are
// skipped as kinks by the checker.
TEST_P(BatchNormLayers, ReLU6) {
  ReLU6 relu6;
  CheckLayerGradients(relu6, Shape{4, 3, 3}, 3, backend(), RandomVector(3 * 36, 28, -3.0f, 9.0f));
}

INSTANTIATE_TEST_SUITE_P(Backends, BatchNormLayers, ::testing::Values("cpu1", "cpu3", "opencl"),
                         [](const auto& info) { return info.param; });

TEST(BatchNormLayersSetup, ShapesParametersAndRefusals) {
  BatchNorm2D bn(0.0f, 0.0f);
  EXPECT_FLOAT_EQ(bn.epsilon(), 1e-5f);
  EXPECT_FLOAT_EQ(bn.momentum(), 0.1f);
  EXPECT_EQ(bn.Setup(Shape{8, 5, 5}), (Shape{8, 5, 5}));
  EXPECT_EQ(bn.ParamCount(), 16u);
  EXPECT_EQ(bn.RunningStatCount(), 16u);
  EXPECT_FALSE(bn.InPlace());
  EXPECT_THROW(bn.Setup(Shape{8, 5}), std::invalid_argument);
  EXPECT_THROW(BatchNorm2D(-1.0f, 0.1f), std::invalid_argument);
  EXPECT_THROW(BatchNorm2D(1e-5f, 1.5f), std::invalid_argument);

  AvgPool2D pool(3, 2);
  EXPECT_EQ(pool.Setup(Shape{4, 7, 8}), (Shape{4, 3, 3}));
  EXPECT_THROW(pool.Setup(Shape{4, 2, 8}), std::invalid_argument);
  EXPECT_THROW(AvgPool2D(0, 1), std::invalid_argument);

  GlobalAvgPool gap;
  EXPECT_EQ(gap.Setup(Shape{16, 7, 7}), (Shape{16}));
  EXPECT_THROW(gap.Setup(Shape{16}), std::invalid_argument);

  ReLU6 relu6;
  EXPECT_TRUE(relu6.InPlace());
  EXPECT_TRUE(relu6.BackwardReadsOutput());
  EXPECT_TRUE(relu6.Ops().Has(kernels::Op::kClipBackward));
}

}  // namespace
}  // namespace mt
