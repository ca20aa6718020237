// Every op of the OpenCL backend against the CPU backend, over a grid of
// shapes (odd sizes, stride 2 and 3, padding, batch 1, overlapping pools,
// views at non-zero offsets): max relative error within 1e-4, and index
// outputs (argmax, dropout masks) identical. Skips, saying why, when the
// machine has no OpenCL platform.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_backend.h"
#include "tests/kernels/cpu_test_util.h"

#ifdef MT_HAVE_OPENCL
#include "kernels/opencl/opencl_backend.h"
#include "kernels/opencl/opencl_device.h"
#endif

namespace mt::kernels {
namespace {

using testing::kTolerance;
using testing::MakeBuffer;
using testing::MakeIntBuffer;
using testing::MaxRelativeError;
using testing::RandomVector;
using testing::ToDouble;
using testing::ToHost;
using testing::ToHostInt;

#ifndef MT_HAVE_OPENCL
TEST(OpenClBackend, Skipped) { GTEST_SKIP() << "this build has no OpenCL backend (OpenCL or CLBlast not found)"; }
#else

class OpenClVsCpu : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto devices = ListOpenClDevices();
    if (devices.empty()) GTEST_SKIP() << "no OpenCL platform on this machine";
    gpu_ = std::make_unique<OpenClBackend>(DefaultOpenClDevice());
  }

  // Both backends get the same host data.
  struct Pair {
    std::unique_ptr<Buffer> cpu, cl;
  };
  Pair Make(const std::vector<float>& host) { return {MakeBuffer(cpu_, host), MakeBuffer(*gpu_, host)}; }
  Pair MakeInt(const std::vector<int32_t>& host) { return {MakeIntBuffer(cpu_, host), MakeIntBuffer(*gpu_, host)}; }
  Pair Zeros(size_t n) { return Make(std::vector<float>(n, 0.0f)); }
  // Relative error of the OpenCL result against the CPU one.
  double Error(Pair& p) { return MaxRelativeError(ToHost(*gpu_, *p.cl), ToDouble(ToHost(cpu_, *p.cpu))); }
  void ExpectSame(Pair& p, const std::string& what) {
    const double e = Error(p);
    EXPECT_LE(e, kTolerance) << what;
  }

  CpuBackend cpu_{2};
  std::unique_ptr<OpenClBackend> gpu_;
};

TEST_F(OpenClVsCpu, MemoryOpsRespectViewOffsets) {
  auto a = Make(RandomVector(100, 1));
  auto b = Zeros(100);
  for (Backend* be : {static_cast<Backend*>(&cpu_), static_cast<Backend*>(gpu_.get())}) {
    Buffer& src = be == &cpu_ ? *a.cpu : *a.cl;
    Buffer& dst = be == &cpu_ ? *b.cpu : *b.cl;
    be->Copy(WholeOf(src).Slice(3, 40), WholeOf(dst).Slice(50, 40));
    be->Fill(WholeOf(dst).Slice(10, 7), 2.5f);
    be->Axpy(0.5f, WholeOf(src).Slice(0, 30), WholeOf(dst).Slice(5, 30));
    be->Scale(-3.0f, WholeOf(dst).Slice(20, 61));
  }
  EXPECT_EQ(ToHost(*gpu_, *b.cl), ToHost(cpu_, *b.cpu));
  std::vector<float> part(9);
  gpu_->Download(WholeOf(*a.cl).Slice(91, 9), part.data());
  const auto all = RandomVector(100, 1);
  EXPECT_EQ(part, std::vector<float>(all.begin() + 91, all.end()));
  EXPECT_EQ(gpu_->Name(), "opencl");
}

struct GemmShape {
  int m, n, k;
};

TEST_F(OpenClVsCpu, GemmAllTransposesOverLeNetMenteeAndOddShapes) {
  // LeNet's and mentee's dense layers at batch 64, their conv GEMMs, odd and degenerate shapes.
  const std::vector<GemmShape> shapes = {{64, 120, 400}, {64, 84, 120}, {64, 10, 84},  {6, 784, 25},
                                         {16, 100, 150}, {32, 1024, 27}, {64, 256, 2048}, {7, 5, 3},
                                         {1, 1, 1},      {1, 13, 17},   {33, 1, 9}};
  for (const GemmShape& s : shapes) {
    for (int t = 0; t < 4; ++t) {
      const bool ta = t & 1, tb = t & 2;
      const size_t off = 5;  // views that do not start at the buffer's start
      auto a = Make(RandomVector(off + size_t(s.m) * s.k, 10 + t));
      auto b = Make(RandomVector(off + size_t(s.k) * s.n, 20 + t));
      auto c = Make(RandomVector(off + size_t(s.m) * s.n, 30 + t));
      const auto va = [&](Buffer& x) { return WholeOf(x).Slice(off, size_t(s.m) * s.k); };
      const auto vb = [&](Buffer& x) { return WholeOf(x).Slice(off, size_t(s.k) * s.n); };
      const auto vc = [&](Buffer& x) { return WholeOf(x).Slice(off, size_t(s.m) * s.n); };
      cpu_.Gemm(ta, tb, s.m, s.n, s.k, 0.7f, va(*a.cpu), vb(*b.cpu), 0.3f, vc(*c.cpu));
      gpu_->Gemm(ta, tb, s.m, s.n, s.k, 0.7f, va(*a.cl), vb(*b.cl), 0.3f, vc(*c.cl));
      ExpectSame(c, "gemm " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) +
                        " ta=" + std::to_string(ta) + " tb=" + std::to_string(tb));
    }
  }
}

struct ConvCase {
  const char* name;
  ConvGeometry g;
};

TEST_F(OpenClVsCpu, ConvForwardAndBackwardOverAGridOfShapes) {
  const std::vector<ConvCase> cases = {
      {"lenet_conv1", {8, 1, 28, 28, 6, 5, 1, 2}},   {"lenet_conv2", {8, 6, 14, 14, 16, 5, 1, 0}},
      {"mentee_conv1", {2, 3, 32, 32, 32, 3, 1, 1}}, {"odd_sizes", {3, 5, 9, 7, 3, 3, 1, 0}},
      {"stride2_pad1", {2, 4, 11, 10, 5, 3, 2, 1}},  {"stride2_even", {2, 2, 8, 8, 4, 2, 2, 0}},
      {"stride3_k5_pad2", {2, 3, 13, 12, 2, 5, 3, 2}}, {"k1_stride2", {2, 3, 7, 7, 4, 1, 2, 0}},
      {"batch1", {1, 2, 6, 5, 3, 3, 1, 1}},
  };
  for (const ConvCase& cc : cases) {
    for (int variant = 0; variant < 2; ++variant) {
      // variant 1: no bias and no input gradient (a first layer without bias).
      const ConvGeometry& g = cc.g;
      const std::string what = std::string(cc.name) + (variant ? " no bias, no d_in" : "");
      auto in = Make(RandomVector(size_t(g.batch) * g.in_size(), 1));
      auto w = Make(RandomVector(g.weight_count(), 2));
      auto bias = Make(RandomVector(g.out_c, 3));
      auto out = Zeros(size_t(g.batch) * g.out_size());
      auto d_out = Make(RandomVector(size_t(g.batch) * g.out_size(), 4));
      auto d_in = Zeros(size_t(g.batch) * g.in_size());
      auto d_w = Make(RandomVector(g.weight_count(), 5));  // garbage that must be overwritten
      auto d_b = Make(RandomVector(g.out_c, 6));
      auto ws_cpu = cpu_.Allocate(cpu_.ConvWorkspaceCount(g));
      auto ws_cl = gpu_->Allocate(gpu_->ConvWorkspaceCount(g));
      const auto run = [&](Backend& be, bool cl, Buffer& ws) {
        auto pick = [cl](Pair& p) { return WholeOf(cl ? *p.cl : *p.cpu); };
        be.Conv2dForward(g, pick(in), pick(w), variant ? View{} : pick(bias), pick(out), WholeOf(ws));
        be.Conv2dBackward(g, pick(in), pick(w), pick(d_out), variant ? View{} : pick(d_in), pick(d_w),
                          variant ? View{} : pick(d_b), WholeOf(ws));
      };
      run(cpu_, false, *ws_cpu);
      run(*gpu_, true, *ws_cl);
      ExpectSame(out, what + ": out");
      ExpectSame(d_w, what + ": d_weight");
      if (!variant) {
        ExpectSame(d_in, what + ": d_in");
        ExpectSame(d_b, what + ": d_bias");
      }
    }
  }
}

TEST_F(OpenClVsCpu, ConvLargerThanOneWorkspaceGroupStillMatches) {
  // Mentee's second conv at batch 40 needs more columns than the workspace cap
  // holds, so the batch runs in several groups, the last one partial.
  const ConvGeometry g{40, 32, 32, 32, 32, 3, 1, 1};
  ASSERT_LT(gpu_->ConvWorkspaceCount(g), size_t(g.batch) * (g.patch() + g.out_c) * g.out_h() * g.out_w());
  auto in = Make(RandomVector(size_t(g.batch) * g.in_size(), 7));
  auto w = Make(RandomVector(g.weight_count(), 8));
  auto bias = Make(RandomVector(g.out_c, 9));
  auto out = Zeros(size_t(g.batch) * g.out_size());
  auto d_out = Make(RandomVector(size_t(g.batch) * g.out_size(), 10));
  auto d_in = Zeros(size_t(g.batch) * g.in_size());
  auto d_w = Zeros(g.weight_count());
  auto d_b = Zeros(g.out_c);
  auto ws_cpu = cpu_.Allocate(cpu_.ConvWorkspaceCount(g));
  auto ws_cl = gpu_->Allocate(gpu_->ConvWorkspaceCount(g));
  cpu_.Conv2dForward(g, WholeOf(*in.cpu), WholeOf(*w.cpu), WholeOf(*bias.cpu), WholeOf(*out.cpu), WholeOf(*ws_cpu));
  gpu_->Conv2dForward(g, WholeOf(*in.cl), WholeOf(*w.cl), WholeOf(*bias.cl), WholeOf(*out.cl), WholeOf(*ws_cl));
  cpu_.Conv2dBackward(g, WholeOf(*in.cpu), WholeOf(*w.cpu), WholeOf(*d_out.cpu), WholeOf(*d_in.cpu),
                      WholeOf(*d_w.cpu), WholeOf(*d_b.cpu), WholeOf(*ws_cpu));
  gpu_->Conv2dBackward(g, WholeOf(*in.cl), WholeOf(*w.cl), WholeOf(*d_out.cl), WholeOf(*d_in.cl),
                       WholeOf(*d_w.cl), WholeOf(*d_b.cl), WholeOf(*ws_cl));
  ExpectSame(out, "out");
  ExpectSame(d_in, "d_in");
  ExpectSame(d_w, "d_weight");
  ExpectSame(d_b, "d_bias");
}

TEST_F(OpenClVsCpu, MaxPoolForwardAndBackward) {
  const std::vector<PoolGeometry> shapes = {
      {8, 6, 28, 28, 2, 2}, {8, 16, 10, 10, 2, 2}, {1, 3, 7, 9, 2, 2},
      {2, 2, 9, 9, 3, 2},   {2, 2, 6, 7, 3, 1},   {1, 1, 5, 5, 5, 5},
  };
  for (const PoolGeometry& g : shapes) {
    const std::string what = "pool " + std::to_string(g.in_h) + "x" + std::to_string(g.in_w) + " size " +
                             std::to_string(g.size) + " stride " + std::to_string(g.stride);
    const size_t n_in = size_t(g.batch) * g.in_size(), n_out = size_t(g.batch) * g.out_size();
    auto in = Make(RandomVector(n_in, 11));
    auto out = Zeros(n_out);
    auto arg = Zeros(n_out);
    auto d_out = Make(RandomVector(n_out, 12));
    auto d_in = Make(RandomVector(n_in, 13));  // must be overwritten
    cpu_.MaxPoolForward(g, WholeOf(*in.cpu), WholeOf(*out.cpu), WholeOf(*arg.cpu));
    gpu_->MaxPoolForward(g, WholeOf(*in.cl), WholeOf(*out.cl), WholeOf(*arg.cl));
    cpu_.MaxPoolBackward(g, WholeOf(*d_out.cpu), WholeOf(*arg.cpu), WholeOf(*d_in.cpu));
    gpu_->MaxPoolBackward(g, WholeOf(*d_out.cl), WholeOf(*arg.cl), WholeOf(*d_in.cl));
    EXPECT_EQ(ToHost(*gpu_, *out.cl), ToHost(cpu_, *out.cpu)) << what;
    EXPECT_EQ(ToHostInt(*gpu_, *arg.cl), ToHostInt(cpu_, *arg.cpu)) << what;
    ExpectSame(d_in, what + ": d_in");
  }
}

TEST_F(OpenClVsCpu, BiasAddAndGradientForDenseAndConvLayouts) {
  struct S {
    int outer, channels, inner;
  };
  for (const S& s : {S{64, 120, 1}, S{3, 7, 1}, S{64, 6, 784}, S{1, 5, 9}, S{5, 3, 1000}}) {
    const size_t n = size_t(s.outer) * s.channels * s.inner;
    auto x = Make(RandomVector(n, 14));
    auto bias = Make(RandomVector(s.channels, 15));
    auto db = Make(RandomVector(s.channels, 16));
    cpu_.AddBias(WholeOf(*x.cpu), WholeOf(*bias.cpu), s.outer, s.channels, s.inner);
    gpu_->AddBias(WholeOf(*x.cl), WholeOf(*bias.cl), s.outer, s.channels, s.inner);
    cpu_.BiasGrad(WholeOf(*x.cpu), WholeOf(*db.cpu), s.outer, s.channels, s.inner);
    gpu_->BiasGrad(WholeOf(*x.cl), WholeOf(*db.cl), s.outer, s.channels, s.inner);
    const std::string what = std::to_string(s.outer) + "x" + std::to_string(s.channels) + "x" + std::to_string(s.inner);
    ExpectSame(x, "add bias " + what);
    ExpectSame(db, "bias grad " + what);
  }
}

TEST_F(OpenClVsCpu, ReluAndDropoutForwardAndBackward) {
  for (size_t n : {size_t(1), size_t(37), size_t(64 * 6 * 28 * 28)}) {
    auto x = Make(RandomVector(n, 17));
    auto y = Zeros(n);
    auto dy = Make(RandomVector(n, 18));
    cpu_.ReluForward(WholeOf(*x.cpu), WholeOf(*y.cpu));
    gpu_->ReluForward(WholeOf(*x.cl), WholeOf(*y.cl));
    // In place, as the model runs it.
    cpu_.ReluBackward(WholeOf(*y.cpu), WholeOf(*dy.cpu), WholeOf(*dy.cpu));
    gpu_->ReluBackward(WholeOf(*y.cl), WholeOf(*dy.cl), WholeOf(*dy.cl));
    EXPECT_EQ(ToHost(*gpu_, *y.cl), ToHost(cpu_, *y.cpu)) << "relu forward, n=" << n;
    EXPECT_EQ(ToHost(*gpu_, *dy.cl), ToHost(cpu_, *dy.cpu)) << "relu backward, n=" << n;

    for (float rate : {0.0f, 0.3f, 1.0f}) {
      auto out = Zeros(n), mask = Zeros(n), dx = Zeros(n);
      cpu_.DropoutForward(WholeOf(*x.cpu), WholeOf(*out.cpu), WholeOf(*mask.cpu), rate, 1234567);
      gpu_->DropoutForward(WholeOf(*x.cl), WholeOf(*out.cl), WholeOf(*mask.cl), rate, 1234567);
      cpu_.DropoutBackward(WholeOf(*x.cpu), WholeOf(*mask.cpu), rate, WholeOf(*dx.cpu));
      gpu_->DropoutBackward(WholeOf(*x.cl), WholeOf(*mask.cl), rate, WholeOf(*dx.cl));
      EXPECT_EQ(ToHost(*gpu_, *mask.cl), ToHost(cpu_, *mask.cpu)) << "dropout mask, rate " << rate;
      ExpectSame(out, "dropout forward, rate " + std::to_string(rate));
      ExpectSame(dx, "dropout backward, rate " + std::to_string(rate));
    }
  }
}

TEST_F(OpenClVsCpu, SoftmaxCrossEntropyAndArgmax) {
  for (int n : {1, 7, 64}) {
    const int classes = 10;
    auto logits = Make(RandomVector(size_t(n) * classes, 19, -8.0f, 8.0f));
    std::vector<int32_t> labels(n);
    for (int i = 0; i < n; ++i) labels[i] = (i * 7 + 3) % classes;
    auto lab = MakeInt(labels);
    auto d = Zeros(size_t(n) * classes);
    auto pred = Zeros(n);
    const double l_cpu = cpu_.SoftmaxCrossEntropy(WholeOf(*logits.cpu), WholeOf(*lab.cpu), n, classes, WholeOf(*d.cpu));
    const double l_cl = gpu_->SoftmaxCrossEntropy(WholeOf(*logits.cl), WholeOf(*lab.cl), n, classes, WholeOf(*d.cl));
    EXPECT_NEAR(l_cl, l_cpu, kTolerance * l_cpu) << "n=" << n;
    ExpectSame(d, "d_logits n=" + std::to_string(n));
    cpu_.ArgmaxRows(WholeOf(*logits.cpu), n, classes, WholeOf(*pred.cpu));
    gpu_->ArgmaxRows(WholeOf(*logits.cl), n, classes, WholeOf(*pred.cl));
    EXPECT_EQ(ToHostInt(*gpu_, *pred.cl), ToHostInt(cpu_, *pred.cpu)) << "argmax n=" << n;
  }
}

TEST_F(OpenClVsCpu, SoftmaxCrossEntropyRejectsALabelOutOfRange) {
  auto logits = gpu_->Allocate(20);
  std::vector<int32_t> labels = {3, 10};
  auto lab = MakeIntBuffer(*gpu_, labels);
  auto d = gpu_->Allocate(20);
  EXPECT_THROW(gpu_->SoftmaxCrossEntropy(WholeOf(*logits), WholeOf(*lab), 2, 10, WholeOf(*d)), std::out_of_range);
}

TEST_F(OpenClVsCpu, SgdGivesTheCpuBitsAndAdamMatches) {
  const size_t n = 61706;  // LeNet-5's parameter count
  for (float momentum : {0.0f, 0.9f}) {
    auto p = Make(RandomVector(n, 20));
    auto g = Make(RandomVector(n, 21));
    auto v = Make(RandomVector(n, 22));
    const SgdHyper h{0.05f, momentum, 5e-4f};
    for (int step = 0; step < 3; ++step) {
      cpu_.SgdUpdate(h, WholeOf(*p.cpu), WholeOf(*g.cpu), WholeOf(*v.cpu));
      gpu_->SgdUpdate(h, WholeOf(*p.cl), WholeOf(*g.cl), WholeOf(*v.cl));
    }
    // Bit-equal, so a hub on one backend and a worker on the other agree on the weights' digest.
    EXPECT_EQ(ToHost(*gpu_, *p.cl), ToHost(cpu_, *p.cpu)) << "momentum " << momentum;
  }
  auto p = Make(RandomVector(n, 23));
  auto g = Make(RandomVector(n, 24));
  auto m = Zeros(n), v = Zeros(n);
  for (int step = 1; step <= 3; ++step) {
    const AdamHyper h{0.001f, 0.9f, 0.999f, 1e-8f, 1e-4f, step};
    cpu_.AdamUpdate(h, WholeOf(*p.cpu), WholeOf(*g.cpu), WholeOf(*m.cpu), WholeOf(*v.cpu));
    gpu_->AdamUpdate(h, WholeOf(*p.cl), WholeOf(*g.cl), WholeOf(*m.cl), WholeOf(*v.cl));
  }
  ExpectSame(p, "adam params");
  ExpectSame(m, "adam m");
  ExpectSame(v, "adam v");
}

TEST(OpenClError, NamesTheCallTheDeviceAndTheCode) {
  const OpenClError e("clCreateBuffer", "Test Device", CL_MEM_OBJECT_ALLOCATION_FAILURE);
  EXPECT_STREQ(e.what(), "clCreateBuffer on Test Device: CL_MEM_OBJECT_ALLOCATION_FAILURE (-4)");
}

#endif  // MT_HAVE_OPENCL

}  // namespace
}  // namespace mt::kernels
