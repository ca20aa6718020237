// Optimizer steps against values worked out by hand (PyTorch's update rules),
// and state that survives a save and load.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "core/optim/optimizer.h"
#include "core/optim/optimizer_proto.h"
#include "kernels/cpu/cpu_backend.h"

namespace mt {
namespace {

struct Params {
  explicit Params(kernels::Backend& b, std::vector<float> init)
      : backend(b), p(b.Allocate(init.size())), g(b.Allocate(init.size())) {
    b.Upload(init.data(), kernels::WholeOf(*p));
  }
  void SetGrads(std::vector<float> grads) { backend.Upload(grads.data(), kernels::WholeOf(*g)); }
  std::vector<float> Get() {
    std::vector<float> out(p->count());
    backend.Download(kernels::WholeOf(*p), out.data());
    return out;
  }
  kernels::Backend& backend;
  std::unique_ptr<kernels::Buffer> p, g;
};

TEST(Sgd, MomentumAndWeightDecayMatchHandComputedSteps) {
  kernels::CpuBackend backend;
  OptimizerConfig c;
  c.kind = OptimizerKind::kSgd;
  c.lr = 0.1f;
  c.momentum = 0.9f;
  c.weight_decay = 0.01f;
  auto opt = MakeOptimizer(c, backend, 2);
  Params x(backend, {1.0f, -2.0f});
  x.SetGrads({0.5f, 0.25f});
  // g' = g + 0.01 p; v = 0.9 v + g'; p -= 0.1 v, with g fixed at (0.5, 0.25):
  // step 1: g' = (0.51, 0.23), v = g', p = (0.949, -2.023)
  // step 2: g' = (0.50949, 0.22977), v = (0.96849, 0.43677), p = (0.852151, -2.066677)
  // step 3: g' = (0.50852151, 0.22933323), v = (1.38016251, 0.62242623),
  //         p = (0.714134749, -2.128919623)
  const float expected[3][2] = {
      {0.949f, -2.023f}, {0.852151f, -2.066677f}, {0.714134749f, -2.128919623f}};
  for (auto& e : expected) {
    opt->Step(kernels::WholeOf(*x.p), kernels::WholeOf(*x.g));
    const auto p = x.Get();
    EXPECT_NEAR(p[0], e[0], 1e-6);
    EXPECT_NEAR(p[1], e[1], 1e-6);
  }
  EXPECT_EQ(opt->steps(), 3);
}

TEST(Sgd, PlainWithoutMomentum) {
  kernels::CpuBackend backend;
  OptimizerConfig c;
  c.lr = 0.5f;
  c.momentum = 0.0f;
  auto opt = MakeOptimizer(c, backend, 1);
  Params x(backend, {2.0f});
  x.SetGrads({0.25f});
  opt->Step(kernels::WholeOf(*x.p), kernels::WholeOf(*x.g));
  opt->Step(kernels::WholeOf(*x.p), kernels::WholeOf(*x.g));
  EXPECT_NEAR(x.Get()[0], 2.0f - 2 * 0.125f, 1e-7);
}

TEST(Adam, BiasCorrectedStepsWithWeightDecay) {
  kernels::CpuBackend backend;
  OptimizerConfig c;
  c.kind = OptimizerKind::kAdam;
  c.lr = 0.01f;
  c.weight_decay = 0.1f;
  auto opt = MakeOptimizer(c, backend, 1);
  Params x(backend, {1.0f});
  // g' = g + 0.1 p; m = 0.9 m + 0.1 g'; v = 0.999 v + 0.001 g'^2;
  // p -= 0.01 * (m / (1 - 0.9^t)) / (sqrt(v / (1 - 0.999^t)) + 1e-8).
  // t=1, g=0.5: g'=0.6, mhat=0.6, vhat=0.36 -> step 0.01 -> p=0.99
  // t=2, g=-0.25: g'=-0.151, m=0.0389, v=0.000382437 -> p=0.985319199
  // t=3, g=0.125: g'=0.2235319, m=0.05736319, v=0.000432016 -> p=0.979744095
  const float grads[3] = {0.5f, -0.25f, 0.125f};
  const float expected[3] = {0.99f, 0.985319199f, 0.979744095f};
  for (int t = 0; t < 3; ++t) {
    x.SetGrads({grads[t]});
    opt->Step(kernels::WholeOf(*x.p), kernels::WholeOf(*x.g));
    EXPECT_NEAR(x.Get()[0], expected[t], 2e-6) << "step " << t + 1;
  }
}

TEST(OptimizerState, SaveAndLoadContinuesIdentically) {
  for (const OptimizerKind kind : {OptimizerKind::kSgd, OptimizerKind::kAdam}) {
    kernels::CpuBackend backend;
    OptimizerConfig c;
    c.kind = kind;
    c.lr = 0.05f;
    auto a = MakeOptimizer(c, backend, 3);
    Params x(backend, {0.1f, 0.2f, 0.3f});
    x.SetGrads({1.0f, -1.0f, 0.5f});
    a->Step(kernels::WholeOf(*x.p), kernels::WholeOf(*x.g));
    a->Step(kernels::WholeOf(*x.p), kernels::WholeOf(*x.g));
    // Through the bytes of the one schema, as on the wire and on disk.
    std::string bytes;
    ASSERT_TRUE(ToProto(a->SaveState()).SerializeToString(&bytes));
    proto::OptimizerState parsed;
    ASSERT_TRUE(parsed.ParseFromString(bytes));

    auto b = MakeOptimizer(OptimizerConfig{kind}, backend, 3);
    b->LoadState(FromProto(parsed));
    EXPECT_EQ(b->steps(), 2) << OptimizerKindName(kind);
    EXPECT_FLOAT_EQ(b->lr(), 0.05f) << OptimizerKindName(kind);
    Params y(backend, x.Get());
    y.SetGrads({1.0f, -1.0f, 0.5f});
    a->Step(kernels::WholeOf(*x.p), kernels::WholeOf(*x.g));
    b->Step(kernels::WholeOf(*y.p), kernels::WholeOf(*y.g));
    EXPECT_EQ(x.Get(), y.Get()) << OptimizerKindName(kind);
  }
}

TEST(OptimizerState, BadStateIsRejectedClearly) {
  kernels::CpuBackend backend;
  auto sgd = MakeOptimizer(OptimizerConfig{OptimizerKind::kSgd}, backend, 4);
  auto adam = MakeOptimizer(OptimizerConfig{OptimizerKind::kAdam}, backend, 4);
  try {
    sgd->LoadState(adam->SaveState());
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(),
                ::testing::HasSubstr("adam"));  // the state's kind, which --optimizer differs from
  }
  auto small = MakeOptimizer(OptimizerConfig{OptimizerKind::kSgd}, backend, 3);
  EXPECT_THROW(sgd->LoadState(small->SaveState()), std::invalid_argument);
  proto::OptimizerState unknown = ToProto(sgd->SaveState());
  unknown.mutable_settings()->set_kind(static_cast<proto::OptimizerKind>(7));
  EXPECT_THROW(FromProto(unknown), std::invalid_argument);
  EXPECT_THROW(MakeOptimizer(OptimizerConfig{static_cast<OptimizerKind>(7)}, backend, 4),
               std::invalid_argument);
}

TEST(OptimizerConfig, OneCheckHoldsEverySettingToItsRange) {
  EXPECT_NO_THROW(CheckOptimizerConfig(OptimizerConfig{}));
  EXPECT_NO_THROW(CheckOptimizerConfig(RunDefaultOptimizer()));
  auto refused = [](auto damage, const std::string& names) {
    OptimizerConfig c = RunDefaultOptimizer();
    damage(c);
    try {
      CheckOptimizerConfig(c);
      ADD_FAILURE() << names << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr(names));
    }
  };
  refused([](OptimizerConfig& c) { c.lr = std::nanf(""); }, "lr");
  refused([](OptimizerConfig& c) { c.lr = 1e30f; }, "lr");
  refused([](OptimizerConfig& c) { c.lr = -0.1f; }, "lr");
  refused([](OptimizerConfig& c) { c.momentum = 2; }, "momentum");
  refused([](OptimizerConfig& c) { c.momentum = INFINITY; }, "momentum");
  refused([](OptimizerConfig& c) { c.weight_decay = 1.5f; }, "weight_decay");
  refused([](OptimizerConfig& c) { c.beta1 = 1; }, "beta1");
  refused([](OptimizerConfig& c) { c.beta2 = -0.5f; }, "beta2");
  refused([](OptimizerConfig& c) { c.eps = 0; }, "eps");
  refused([](OptimizerConfig& c) { c.kind = static_cast<OptimizerKind>(7); }, "kind");
}

TEST(OptimizerConfig, ALearningRateFarFromTheOptimizersUsualRangeIsNamed) {
  // Issue 44: Adam at SGD's 0.05 stays at chance.
  EXPECT_NE(UnusualLearningRate(OptimizerKind::kAdam, 0.05, 64), "");
  EXPECT_NE(UnusualLearningRate(OptimizerKind::kSgd, 5, 64), "");
  EXPECT_NE(UnusualLearningRate(OptimizerKind::kAdam, 1e-6, 64), "");
  EXPECT_EQ(UnusualLearningRate(OptimizerKind::kAdam, 0.004, 64), "");
  EXPECT_EQ(UnusualLearningRate(OptimizerKind::kAdam, 0.001, 64), "");
  EXPECT_EQ(UnusualLearningRate(OptimizerKind::kAdam, 0.012, 192), "");
  EXPECT_EQ(UnusualLearningRate(OptimizerKind::kSgd, 0.05, 64), "");
  EXPECT_EQ(UnusualLearningRate(OptimizerKind::kSgd, 0.1, 256), "");
  for (OptimizerKind kind : {OptimizerKind::kSgd, OptimizerKind::kAdam})
    for (int64_t batch : {1, 64, 4096})
      EXPECT_EQ(UnusualLearningRate(kind, DefaultLearningRate(kind, batch), batch), "");
}

}  // namespace
}  // namespace mt
