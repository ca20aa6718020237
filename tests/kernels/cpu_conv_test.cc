// Convolution against a direct double-precision reference, through the
// backend (which picks a path) and through each path on its own, so both the
// direct and the im2col + GEMM code are checked on every shape they accept.
#include <gtest/gtest.h>

#include <limits>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/cpu/conv1x1.h"
#include "kernels/cpu/conv3x3.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/direct_conv.h"
#include "kernels/cpu/gemm_conv.h"
#include "kernels/cpu/thread_pool.h"
#include "tests/kernels/cpu_test_util.h"
#include "tests/kernels/reference_conv.h"

namespace mt::kernels {
namespace {

using test_reference::Ref;
using test_reference::ReferenceConv;
using test_support::MakeBuffer;
using test_support::MaxRelativeError;
using test_support::RandomVector;
using test_support::ToHost;

struct ConvCase {
  const char* name;
  ConvGeometry g;
};

void PrintTo(const ConvCase& c, std::ostream* os) { *os << c.name; }

// batch, in_c, in_h, in_w, out_c, kernel, stride, pad
const ConvCase kCases[] = {
    {"lenet_conv1", {64, 1, 28, 28, 6, 5, 1, 2}},
    {"lenet_conv2", {64, 6, 14, 14, 16, 5, 1, 0}},
    {"batch1", {1, 3, 9, 9, 4, 3, 1, 1}},
    {"odd_rect", {5, 3, 7, 11, 5, 3, 1, 0}},
    {"stride2_pad1", {4, 3, 9, 8, 7, 3, 2, 1}},
    {"stride2_even", {3, 2, 12, 12, 3, 2, 2, 0}},
    {"stride3_k5_pad2", {2, 2, 13, 10, 3, 5, 3, 2}},
    {"k1", {3, 5, 6, 7, 9, 1, 1, 0}},
    {"k1_stride2", {3, 4, 7, 7, 3, 1, 2, 0}},
    {"pad_exceeds_half", {2, 1, 4, 5, 2, 3, 1, 2}},
    {"many_out", {3, 3, 10, 10, 19, 3, 1, 1}},
    {"wide_row", {2, 2, 5, 37, 3, 3, 1, 1}},
    {"kernel_equals_input", {3, 2, 5, 5, 4, 5, 1, 0}},
    {"more_threads_than_samples", {2, 2, 6, 6, 3, 3, 1, 1}},
    {"many_weights", {5, 32, 6, 6, 16, 3, 1, 1}},
    {"tiny_output", {3, 4, 4, 4, 5, 3, 1, 1}},
    {"batch7_lenet2", {7, 6, 14, 14, 16, 5, 1, 0}},
    // Many weights and a long output: direct backward with scalar partials.
    {"many_weights_long", {2, 32, 16, 16, 16, 3, 1, 1}},
    // Channel counts in whole vectors on every ISA: the 3x3 kernel's shapes.
    {"c3_odd_planes", {3, 16, 7, 9, 32, 3, 1, 1}},
    {"c3_pad0", {2, 32, 6, 5, 16, 3, 1, 0}},
    {"c3_pad2", {2, 16, 4, 4, 16, 3, 1, 2}},
    {"c3_batch1_48", {1, 48, 8, 8, 48, 3, 1, 1}},
    {"c3_batch5", {5, 32, 5, 13, 64, 3, 1, 1}},
    {"c3_uneven_blocks", {2, 16, 3, 37, 80, 3, 1, 1}},
    {"c3_one_pixel", {4, 16, 1, 1, 16, 3, 1, 1}},
    {"c3_stride2", {3, 32, 9, 9, 32, 3, 2, 1}},
    // RGB in: the 3x3 kernel forward and for the weight gradient only.
    {"c3_rgb", {3, 3, 8, 7, 16, 3, 1, 1}},
    // Pointwise: channels off the vector width and the register blocks,
    // planes from 1x1 (not the 1x1 kernel's) to 32x32, vectors that span
    // samples.
    {"p1_odd_channels", {3, 5, 4, 4, 7, 1, 1, 0}},
    {"p1_batch1_32x32", {1, 13, 32, 32, 19, 1, 1, 0}},
    {"p1_16x16", {3, 16, 16, 16, 64, 1, 1, 0}},
    {"p1_8x8", {5, 24, 8, 8, 96, 1, 1, 0}},
    {"p1_4x4", {7, 128, 4, 4, 33, 1, 1, 0}},
    {"p1_rect", {2, 9, 4, 12, 10, 1, 1, 0}},
    {"p1_2x2", {3, 16, 2, 2, 8, 1, 1, 0}},
    {"p1_1x1", {5, 16, 1, 1, 12, 1, 1, 0}},
};

enum class Path { kBackend, kGemm, kDirect, kConv3x3, kConv1x1 };

const char* PathName(Path p) {
  switch (p) {
    case Path::kBackend: return "backend";
    case Path::kGemm: return "gemm";
    case Path::kDirect: return "direct";
    case Path::kConv3x3: return "conv3x3";
    case Path::kConv1x1: return "conv1x1";
  }
  return "?";
}

void PrintTo(Path p, std::ostream* os) { *os << PathName(p); }

class CpuConvTest : public ::testing::TestWithParam<std::tuple<int, Path, ConvCase>> {};

TEST_P(CpuConvTest, ForwardAndBackwardMatchReference) {
  const int threads = std::get<0>(GetParam());
  const Path path = std::get<1>(GetParam());
  const ConvGeometry g = std::get<2>(GetParam()).g;
  if (path == Path::kDirect && !DirectConvHandles(g)) GTEST_SKIP() << "direct path needs stride 1";
  if (path == Path::kConv3x3 && !Conv3x3Handles(g)) GTEST_SKIP() << "not a shape for conv3x3";
  if (path == Path::kConv1x1 && !Conv1x1Handles(g)) GTEST_SKIP() << "not a shape for conv1x1";

  const auto in = RandomVector(size_t(g.batch) * g.in_size(), 1);
  const auto w = RandomVector(g.weight_count(), 2);
  const auto bias = RandomVector(g.out_c, 3);
  const auto d_out = RandomVector(size_t(g.batch) * g.out_size(), 4);
  const Ref ref = ReferenceConv(g, in, w, bias, d_out);
  const float nan = std::numeric_limits<float>::quiet_NaN();

  CpuBackend be(threads);
  // Outputs start as NaN: every op must overwrite, never accumulate into them.
  auto out = MakeBuffer(be, std::vector<float>(ref.out.size(), nan));
  auto d_in = MakeBuffer(be, std::vector<float>(ref.d_in.size(), nan));
  auto d_w = MakeBuffer(be, std::vector<float>(ref.d_weight.size(), nan));
  auto d_b = MakeBuffer(be, std::vector<float>(ref.d_bias.size(), nan));
  auto inb = MakeBuffer(be, in), wb = MakeBuffer(be, w), bb = MakeBuffer(be, bias);
  auto dob = MakeBuffer(be, d_out);

  size_t ws_count = be.ConvWorkspaceCount(g);
  if (path == Path::kGemm) ws_count = GemmConvWorkspaceFloats(g, threads);
  if (path == Path::kDirect) ws_count = DirectConvWorkspaceFloats(g, threads);
  if (path == Path::kConv3x3) ws_count = Conv3x3WorkspaceFloats(g, threads);
  if (path == Path::kConv1x1) ws_count = Conv1x1WorkspaceFloats(g, threads);
  // Garbage in the workspace must not matter.
  auto ws = MakeBuffer(be, std::vector<float>(ws_count, nan));
  float* wsp = CpuBackend::Data(WholeOf(*ws));
  auto D = [](std::unique_ptr<Buffer>& b) { return CpuBackend::Data(WholeOf(*b)); };

  auto forward = [&] {
    switch (path) {
      case Path::kBackend:
        be.Conv2dForward(g, WholeOf(*inb), WholeOf(*wb), WholeOf(*bb), WholeOf(*out), WholeOf(*ws));
        break;
      case Path::kGemm: GemmConvForward(be.pool(), g, D(inb), D(wb), D(bb), D(out), wsp); break;
      case Path::kDirect: DirectConvForward(be.pool(), g, D(inb), D(wb), D(bb), D(out), wsp); break;
      case Path::kConv3x3: Conv3x3Forward(be.pool(), g, D(inb), D(wb), D(bb), D(out), wsp); break;
      case Path::kConv1x1: Conv1x1Forward(be.pool(), g, D(inb), D(wb), D(bb), D(out), wsp); break;
    }
  };
  const bool own_d_in = path != Path::kConv3x3 || Conv3x3HandlesInputGradient(g);
  auto backward = [&](bool with_d_in) {
    switch (path) {
      case Path::kBackend:
        be.Conv2dBackward(g, WholeOf(*inb), WholeOf(*wb), WholeOf(*dob),
                          with_d_in ? WholeOf(*d_in) : View{}, WholeOf(*d_w), WholeOf(*d_b),
                          WholeOf(*ws));
        break;
      case Path::kGemm:
        GemmConvBackward(be.pool(), g, D(inb), D(wb), D(dob), with_d_in ? D(d_in) : nullptr, D(d_w),
                         D(d_b), wsp);
        break;
      case Path::kDirect:
        DirectConvBackward(be.pool(), g, D(inb), D(wb), D(dob), with_d_in ? D(d_in) : nullptr,
                           D(d_w), D(d_b), wsp);
        break;
      case Path::kConv3x3:
        Conv3x3Backward(be.pool(), g, D(inb), D(wb), D(dob),
                        with_d_in && own_d_in ? D(d_in) : nullptr, D(d_w), D(d_b), wsp);
        break;
      case Path::kConv1x1:
        Conv1x1Backward(be.pool(), g, D(inb), D(wb), D(dob), with_d_in ? D(d_in) : nullptr, D(d_w),
                        D(d_b), wsp);
        break;
    }
  };

  forward();
  EXPECT_LE(MaxRelativeError(ToHost(be, *out), ref.out), test_support::kTolerance) << "forward";

  backward(false);
  EXPECT_LE(MaxRelativeError(ToHost(be, *d_w), ref.d_weight), test_support::kTolerance)
      << "d_weight";
  EXPECT_LE(MaxRelativeError(ToHost(be, *d_b), ref.d_bias), test_support::kTolerance) << "d_bias";
  for (float v : ToHost(be, *d_in)) ASSERT_TRUE(std::isnan(v)) << "d_in written though empty";

  // Again with d_in, over the previous results: gradients are overwritten.
  backward(true);
  EXPECT_LE(MaxRelativeError(ToHost(be, *d_w), ref.d_weight), test_support::kTolerance)
      << "d_weight 2";
  EXPECT_LE(MaxRelativeError(ToHost(be, *d_b), ref.d_bias), test_support::kTolerance) << "d_bias 2";
  if (own_d_in) {
    EXPECT_LE(MaxRelativeError(ToHost(be, *d_in), ref.d_in), test_support::kTolerance) << "d_in";
  }

  // Forward once more after backward used the same workspace.
  be.Fill(WholeOf(*out), nan);
  forward();
  EXPECT_LE(MaxRelativeError(ToHost(be, *out), ref.out), test_support::kTolerance) << "forward 2";
}

INSTANTIATE_TEST_SUITE_P(Grid, CpuConvTest,
                         ::testing::Combine(::testing::Values(1, 2, 3),
                                            ::testing::Values(Path::kBackend, Path::kGemm,
                                                              Path::kDirect, Path::kConv3x3,
                                                              Path::kConv1x1),
                                            ::testing::ValuesIn(kCases)),
                         [](const auto& info) {
                           return std::string(std::get<2>(info.param).name) + "_" +
                                  PathName(std::get<1>(info.param)) + "_t" +
                                  std::to_string(std::get<0>(info.param));
                         });

TEST(CpuConv, NoBiasAndNoBiasGradient) {
  const ConvGeometry g{2, 2, 6, 6, 3, 3, 1, 1};
  const auto in = RandomVector(size_t(g.batch) * g.in_size(), 5);
  const auto w = RandomVector(g.weight_count(), 6);
  const auto d_out = RandomVector(size_t(g.batch) * g.out_size(), 7);
  const Ref ref = ReferenceConv(g, in, w, {}, d_out);
  for (bool direct : {false, true}) {
    CpuBackend be(2);
    auto inb = MakeBuffer(be, in), wb = MakeBuffer(be, w), dob = MakeBuffer(be, d_out);
    auto out = be.Allocate(ref.out.size()), d_w = be.Allocate(ref.d_weight.size());
    std::vector<float> ws(direct ? DirectConvWorkspaceFloats(g, 2) : GemmConvWorkspaceFloats(g, 2));
    auto D = [](std::unique_ptr<Buffer>& b) { return CpuBackend::Data(WholeOf(*b)); };
    if (direct) {
      DirectConvForward(be.pool(), g, D(inb), D(wb), nullptr, D(out), ws.data());
      DirectConvBackward(be.pool(), g, D(inb), D(wb), D(dob), nullptr, D(d_w), nullptr, ws.data());
    } else {
      GemmConvForward(be.pool(), g, D(inb), D(wb), nullptr, D(out), ws.data());
      GemmConvBackward(be.pool(), g, D(inb), D(wb), D(dob), nullptr, D(d_w), nullptr, ws.data());
    }
    EXPECT_LE(MaxRelativeError(ToHost(be, *out), ref.out), test_support::kTolerance);
    EXPECT_LE(MaxRelativeError(ToHost(be, *d_w), ref.d_weight), test_support::kTolerance);
  }
}

// The 3x3 kernel without a bias, with only one of the two gradients, and
// the same bits on every run with a pool of 3.
TEST(CpuConv, Conv3x3WithoutBiasOrOneGradient) {
  const ConvGeometry g{7, 16, 6, 5, 32, 3, 1, 1};
  ASSERT_TRUE(Conv3x3Handles(g));
  const auto in = RandomVector(size_t(g.batch) * g.in_size(), 15);
  const auto w = RandomVector(g.weight_count(), 16);
  const auto d_out = RandomVector(size_t(g.batch) * g.out_size(), 17);
  const Ref ref = ReferenceConv(g, in, w, {}, d_out);
  CpuBackend be(3);
  std::vector<float> out(ref.out.size()), d_in(ref.d_in.size()), d_w(ref.d_weight.size());
  std::vector<float> ws(Conv3x3WorkspaceFloats(g, 3), std::numeric_limits<float>::quiet_NaN());
  Conv3x3Forward(be.pool(), g, in.data(), w.data(), nullptr, out.data(), ws.data());
  EXPECT_LE(MaxRelativeError(out, ref.out), test_support::kTolerance);
  Conv3x3Backward(be.pool(), g, in.data(), w.data(), d_out.data(), d_in.data(), nullptr, nullptr,
                  ws.data());
  EXPECT_LE(MaxRelativeError(d_in, ref.d_in), test_support::kTolerance);
  std::vector<float> first;
  for (int run = 0; run < 3; ++run) {
    Conv3x3Backward(be.pool(), g, in.data(), w.data(), d_out.data(), nullptr, d_w.data(), nullptr,
                    ws.data());
    EXPECT_LE(MaxRelativeError(d_w, ref.d_weight), test_support::kTolerance);
    if (run == 0) first = d_w;
    EXPECT_EQ(d_w, first) << "run " << run;
  }
}

// The pointwise kernel gives the same bits for every thread count (each
// weight's sum runs over position tiles in one order), without a bias and
// with either gradient alone.
TEST(CpuConv, Conv1x1SameBitsForAnyThreadCount) {
  const ConvGeometry g{9, 24, 8, 8, 40, 1, 1, 0};
  ASSERT_TRUE(Conv1x1Handles(g));
  const auto in = RandomVector(size_t(g.batch) * g.in_size(), 18);
  const auto w = RandomVector(g.weight_count(), 19);
  const auto d_out = RandomVector(size_t(g.batch) * g.out_size(), 20);
  const Ref ref = ReferenceConv(g, in, w, {}, d_out);
  std::vector<float> first_out, first_in, first_w;
  for (int threads = 1; threads <= 3; ++threads) {
    SCOPED_TRACE(threads);
    CpuBackend be(threads);
    std::vector<float> out(ref.out.size()), d_in(ref.d_in.size()), d_w(ref.d_weight.size());
    std::vector<float> ws(Conv1x1WorkspaceFloats(g, threads),
                          std::numeric_limits<float>::quiet_NaN());
    Conv1x1Forward(be.pool(), g, in.data(), w.data(), nullptr, out.data(), ws.data());
    Conv1x1Backward(be.pool(), g, in.data(), w.data(), d_out.data(), d_in.data(), nullptr, nullptr,
                    ws.data());
    Conv1x1Backward(be.pool(), g, in.data(), w.data(), d_out.data(), nullptr, d_w.data(), nullptr,
                    ws.data());
    EXPECT_LE(MaxRelativeError(out, ref.out), test_support::kTolerance);
    EXPECT_LE(MaxRelativeError(d_in, ref.d_in), test_support::kTolerance);
    EXPECT_LE(MaxRelativeError(d_w, ref.d_weight), test_support::kTolerance);
    if (threads == 1) {
      first_out = out;
      first_in = d_in;
      first_w = d_w;
    }
    EXPECT_EQ(out, first_out);
    EXPECT_EQ(d_in, first_in);
    EXPECT_EQ(d_w, first_w);
  }
}

// Layers size the workspace once for their largest batch and then run
// smaller ones (an epoch's last batch, the hub's adaptive batch sizes).
TEST(CpuConv, WorkspaceForLargestBatchServesSmallerOnes) {
  for (const ConvCase& c : kCases) {
    SCOPED_TRACE(c.name);
    ConvGeometry big = c.g;
    big.batch = 64;
    CpuBackend be(3);
    const size_t ws_count = be.ConvWorkspaceCount(big);
    ConvGeometry g = c.g;
    for (int batch : {1, 5, 63}) {
      g.batch = batch;
      ASSERT_LE(be.ConvWorkspaceCount(g), ws_count) << "batch " << batch;
      const auto in = RandomVector(size_t(g.batch) * g.in_size(), 11);
      const auto w = RandomVector(g.weight_count(), 12);
      const auto bias = RandomVector(g.out_c, 13);
      const auto d_out = RandomVector(size_t(g.batch) * g.out_size(), 14);
      const Ref ref = ReferenceConv(g, in, w, bias, d_out);
      auto inb = MakeBuffer(be, in), wb = MakeBuffer(be, w), bb = MakeBuffer(be, bias);
      auto dob = MakeBuffer(be, d_out);
      auto out = be.Allocate(ref.out.size()), d_in = be.Allocate(ref.d_in.size());
      auto d_w = be.Allocate(ref.d_weight.size()), d_b = be.Allocate(ref.d_bias.size());
      auto ws = be.Allocate(ws_count);
      be.Conv2dForward(g, WholeOf(*inb), WholeOf(*wb), WholeOf(*bb), WholeOf(*out), WholeOf(*ws));
      be.Conv2dBackward(g, WholeOf(*inb), WholeOf(*wb), WholeOf(*dob), WholeOf(*d_in),
                        WholeOf(*d_w), WholeOf(*d_b), WholeOf(*ws));
      EXPECT_LE(MaxRelativeError(ToHost(be, *out), ref.out), test_support::kTolerance);
      EXPECT_LE(MaxRelativeError(ToHost(be, *d_in), ref.d_in), test_support::kTolerance);
      EXPECT_LE(MaxRelativeError(ToHost(be, *d_w), ref.d_weight), test_support::kTolerance);
      EXPECT_LE(MaxRelativeError(ToHost(be, *d_b), ref.d_bias), test_support::kTolerance);
    }
  }
}

TEST(CpuConv, BackwardIsDeterministicAcrossRuns) {
  const ConvGeometry g{64, 6, 14, 14, 16, 5, 1, 0};
  const auto in = RandomVector(size_t(g.batch) * g.in_size(), 8);
  const auto w = RandomVector(g.weight_count(), 9);
  const auto d_out = RandomVector(size_t(g.batch) * g.out_size(), 10);
  CpuBackend be(3);
  auto inb = MakeBuffer(be, in), wb = MakeBuffer(be, w), dob = MakeBuffer(be, d_out);
  auto d_in = be.Allocate(in.size()), d_w = be.Allocate(w.size()), d_b = be.Allocate(g.out_c);
  auto ws = be.Allocate(be.ConvWorkspaceCount(g));
  std::vector<float> first_w, first_in;
  for (int run = 0; run < 5; ++run) {
    be.Conv2dBackward(g, WholeOf(*inb), WholeOf(*wb), WholeOf(*dob), WholeOf(*d_in), WholeOf(*d_w),
                      WholeOf(*d_b), WholeOf(*ws));
    if (run == 0) {
      first_w = ToHost(be, *d_w);
      first_in = ToHost(be, *d_in);
    } else {
      EXPECT_EQ(ToHost(be, *d_w), first_w);
      EXPECT_EQ(ToHost(be, *d_in), first_in);
    }
  }
}

}  // namespace
}  // namespace mt::kernels
