// Grouped and depthwise convolution on every backend (cpu1, cpu3, opencl)
// against a double-precision reference: forward with and without bias, all
// three gradients, and the frozen-layer form of the backward pass (no weight
// gradient: d_weight and d_bias left as they were, d_in unchanged).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/cpu/depthwise_conv.h"
#include "tests/kernels/cpu_test_util.h"
#include "tests/kernels/reference_conv.h"
#include "tests/support/test_backends.h"

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
  int batch, in_c, hw_h, hw_w, out_c, kernel, stride, pad, groups;
};

ConvGeometry GeometryOf(const ConvCase& s) {
  ConvGeometry g;
  g.batch = s.batch;
  g.in_c = s.in_c;
  g.in_h = s.hw_h;
  g.in_w = s.hw_w;
  g.out_c = s.out_c;
  g.kernel = s.kernel;
  g.stride = s.stride;
  g.pad = s.pad;
  g.groups = s.groups;
  return g;
}

// Depthwise shapes cover both kernels the CPU backend has fast paths for, both
// strides, multipliers 1 and 2, odd and tiny planes, a plane smaller than the
// kernel's reach (padding only), and shapes the depthwise kernel leaves to
// the grouped im2col path (kernel 9, stride 5).
const ConvCase kShapes[] = {
    {"dw3s1", 3, 8, 16, 16, 8, 3, 1, 1, 8},
    {"dw3s2", 2, 6, 15, 17, 6, 3, 2, 1, 6},
    {"dw5s1", 2, 5, 9, 11, 5, 5, 1, 2, 5},
    {"dw5s2", 2, 4, 16, 16, 4, 5, 2, 2, 4},
    {"dw3s1m2", 2, 4, 8, 8, 8, 3, 1, 1, 4},
    {"dw3s2m2", 3, 3, 7, 9, 6, 3, 2, 1, 3},
    {"dw3tiny", 4, 7, 1, 2, 7, 3, 1, 1, 7},
    {"dw3nopad", 2, 3, 6, 5, 3, 3, 1, 0, 3},
    {"dw3s3", 2, 3, 10, 11, 3, 3, 3, 1, 3},
    {"dw7s1", 1, 2, 12, 12, 2, 7, 1, 3, 2},
    {"dw9", 2, 3, 12, 12, 3, 9, 1, 4, 3},
    {"dw3s5", 2, 3, 12, 12, 3, 3, 5, 1, 3},
    {"g2k3", 2, 4, 8, 8, 6, 3, 1, 1, 2},
    {"g2k3s2", 3, 6, 9, 9, 4, 3, 2, 1, 2},
    {"g4k1", 2, 8, 5, 5, 8, 1, 1, 0, 4},
    {"g3k5", 2, 6, 10, 10, 9, 5, 2, 2, 3},
    {"dw3big", 5, 24, 16, 16, 24, 3, 1, 1, 24},
    // Rows of 32+ columns take the vector stride-2 split, with odd and even
    // padding (which phase the first column lands in).
    {"dw3s2wide", 2, 3, 5, 35, 3, 3, 2, 1, 3},
    {"dw5s2wide", 1, 2, 4, 40, 4, 5, 2, 2, 2},
    {"dw3s2widenopad", 2, 2, 6, 33, 2, 3, 2, 0, 2},
};

class GroupedConv : public ::testing::TestWithParam<std::tuple<std::string, ConvCase>> {
 protected:
  void SetUp() override {
    be_ = ::mt::test_support::MakeTestBackend(std::get<0>(GetParam()));
    if (!be_) GTEST_SKIP() << ::mt::test_support::kNoOpenCl;
    ASSERT_TRUE(be_->SupportedOps().Has(Op::kGroupedConv2d));
  }
  std::unique_ptr<Backend> be_;
};

TEST_P(GroupedConv, MatchesReference) {
  const ConvGeometry g = GeometryOf(std::get<1>(GetParam()));
  const auto in = RandomVector(size_t(g.batch) * g.in_size(), 1);
  const auto w = RandomVector(g.weight_count(), 2);
  const auto b = RandomVector(g.out_c, 3);
  const auto dy = RandomVector(size_t(g.batch) * g.out_size(), 4);
  const Ref want = ReferenceConv(g, in, w, b, dy);
  const Ref want_no_bias = ReferenceConv(g, in, w, {}, dy);
  Backend& be = *be_;
  auto in_b = MakeBuffer(be, in), w_b = MakeBuffer(be, w), b_b = MakeBuffer(be, b);
  auto dy_b = MakeBuffer(be, dy);
  auto out_b = MakeBuffer(be, RandomVector(want.out.size(), 5));
  auto dx_b = MakeBuffer(be, RandomVector(want.d_in.size(), 6));
  auto dw_b = MakeBuffer(be, RandomVector(want.d_weight.size(), 7));
  auto db_b = MakeBuffer(be, RandomVector(want.d_bias.size(), 8));
  auto ws = be.Allocate(be.ConvWorkspaceCount(g));
  const double tol = 1e-5;

  be.Conv2dForward(g, WholeOf(*in_b), WholeOf(*w_b), WholeOf(*b_b), WholeOf(*out_b), WholeOf(*ws));
  EXPECT_LT(MaxRelativeError(ToHost(be, *out_b), want.out), tol) << "forward";
  be.Conv2dForward(g, WholeOf(*in_b), WholeOf(*w_b), View{}, WholeOf(*out_b), WholeOf(*ws));
  EXPECT_LT(MaxRelativeError(ToHost(be, *out_b), want_no_bias.out), tol) << "forward, no bias";

  be.Conv2dBackward(g, WholeOf(*in_b), WholeOf(*w_b), WholeOf(*dy_b), WholeOf(*dx_b),
                    WholeOf(*dw_b), WholeOf(*db_b), WholeOf(*ws));
  EXPECT_LT(MaxRelativeError(ToHost(be, *dx_b), want.d_in), tol) << "d_in";
  EXPECT_LT(MaxRelativeError(ToHost(be, *dw_b), want.d_weight), tol) << "d_weight";
  EXPECT_LT(MaxRelativeError(ToHost(be, *db_b), want.d_bias), tol) << "d_bias";

  // No input gradient (a first layer) and no bias.
  auto dw2_b = MakeBuffer(be, RandomVector(want.d_weight.size(), 9));
  be.Conv2dBackward(g, WholeOf(*in_b), WholeOf(*w_b), WholeOf(*dy_b), View{}, WholeOf(*dw2_b),
                    View{}, WholeOf(*ws));
  EXPECT_LT(MaxRelativeError(ToHost(be, *dw2_b), want.d_weight), tol) << "d_weight alone";
}

// A frozen layer passes no d_weight: d_weight and d_bias keep their values,
// and d_in is the same as with the weight gradients computed.
TEST_P(GroupedConv, FrozenComputesOnlyInputGradient) {
  const ConvGeometry g = GeometryOf(std::get<1>(GetParam()));
  const auto in = RandomVector(size_t(g.batch) * g.in_size(), 11);
  const auto w = RandomVector(g.weight_count(), 12);
  const auto dy = RandomVector(size_t(g.batch) * g.out_size(), 13);
  const Ref want = ReferenceConv(g, in, w, {}, dy);
  Backend& be = *be_;
  auto in_b = MakeBuffer(be, in), w_b = MakeBuffer(be, w), dy_b = MakeBuffer(be, dy);
  auto dx_b = MakeBuffer(be, RandomVector(want.d_in.size(), 14));
  const auto db_before = RandomVector(g.out_c, 15);
  auto db_b = MakeBuffer(be, db_before);
  auto ws = be.Allocate(be.ConvWorkspaceCount(g));
  be.Conv2dBackward(g, WholeOf(*in_b), WholeOf(*w_b), WholeOf(*dy_b), WholeOf(*dx_b), View{},
                    WholeOf(*db_b), WholeOf(*ws));
  EXPECT_LT(MaxRelativeError(ToHost(be, *dx_b), want.d_in), 1e-5);
  EXPECT_EQ(ToHost(be, *db_b), db_before);
}

std::string Name(const ::testing::TestParamInfo<GroupedConv::ParamType>& info) {
  return std::get<0>(info.param) + "_" + std::get<1>(info.param).name;
}

INSTANTIATE_TEST_SUITE_P(Backends, GroupedConv,
                         ::testing::Combine(::testing::Values("cpu1", "cpu3", "opencl"),
                                            ::testing::ValuesIn(kShapes)),
                         Name);

// The ungrouped paths honour the frozen form too (direct and im2col).
TEST(GroupedConvFrozen, UngroupedCpuPathsSkipWeightGradients) {
  for (const int stride : {1, 2}) {
    ConvGeometry g;
    g.batch = 3;
    g.in_c = 4;
    g.in_h = g.in_w = 9;
    g.out_c = 5;
    g.kernel = 3;
    g.stride = stride;
    g.pad = 1;
    const auto in = RandomVector(size_t(g.batch) * g.in_size(), 21);
    const auto w = RandomVector(g.weight_count(), 22);
    const auto dy = RandomVector(size_t(g.batch) * g.out_size(), 23);
    const Ref want = ReferenceConv(g, in, w, {}, dy);
    CpuBackend be(2);
    auto in_b = MakeBuffer(be, in), w_b = MakeBuffer(be, w), dy_b = MakeBuffer(be, dy);
    auto dx_b = MakeBuffer(be, RandomVector(want.d_in.size(), 24));
    const auto db_before = RandomVector(g.out_c, 25);
    auto db_b = MakeBuffer(be, db_before);
    auto ws = be.Allocate(be.ConvWorkspaceCount(g));
    be.Conv2dBackward(g, WholeOf(*in_b), WholeOf(*w_b), WholeOf(*dy_b), WholeOf(*dx_b), View{},
                      WholeOf(*db_b), WholeOf(*ws));
    EXPECT_LT(MaxRelativeError(ToHost(be, *dx_b), want.d_in), 1e-5) << "stride " << stride;
    EXPECT_EQ(ToHost(be, *db_b), db_before) << "stride " << stride;
  }
}

// The depthwise kernel splits its backward pass over channels, so its
// gradients are the same bits on any thread count.
TEST(GroupedConvDepthwise, GradientsIndependentOfThreadCount) {
  ConvGeometry g;
  g.batch = 7;
  g.in_c = g.out_c = g.groups = 12;
  g.in_h = g.in_w = 10;
  g.kernel = 3;
  g.pad = 1;
  ASSERT_TRUE(DepthwiseConvHandles(g));
  const auto in = RandomVector(size_t(g.batch) * g.in_size(), 31);
  const auto w = RandomVector(g.weight_count(), 32);
  const auto dy = RandomVector(size_t(g.batch) * g.out_size(), 33);
  std::vector<std::vector<float>> dws;
  for (const int threads : {1, 2, 5}) {
    CpuBackend be(threads);
    auto in_b = MakeBuffer(be, in), w_b = MakeBuffer(be, w), dy_b = MakeBuffer(be, dy);
    auto dx_b = be.Allocate(in.size()), dw_b = be.Allocate(w.size()), db_b = be.Allocate(g.out_c);
    auto ws = be.Allocate(be.ConvWorkspaceCount(g));
    be.Conv2dBackward(g, WholeOf(*in_b), WholeOf(*w_b), WholeOf(*dy_b), WholeOf(*dx_b),
                      WholeOf(*dw_b), WholeOf(*db_b), WholeOf(*ws));
    dws.push_back(ToHost(be, *dw_b));
  }
  EXPECT_EQ(dws[0], dws[1]);
  EXPECT_EQ(dws[0], dws[2]);
}

}  // namespace
}  // namespace mt::kernels
