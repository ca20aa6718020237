// The CPU kernels of issue 29's structural ops: padded max and average
// pooling (against hand-worked windows and a direct reference) and the row
// scale of squeeze-and-excitation.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "kernels/cpu/cpu_backend.h"
#include "tests/kernels/cpu_test_util.h"
#include "tests/kernels/row_scale_op.h"

namespace mt::kernels {
namespace {

using test_support::MakeBuffer;
using test_support::RandomVector;
using test_support::ToHost;
using test_support::ToHostInt;

PoolGeometry Geometry(int batch, int channels, int h, int w, int size, int stride, int pad,
                      bool count_pad) {
  PoolGeometry g;
  g.batch = batch;
  g.channels = channels;
  g.in_h = h;
  g.in_w = w;
  g.size = size;
  g.stride = stride;
  g.pad = pad;
  g.count_pad = count_pad;
  return g;
}

// One 3x3 plane 1..9, window 3, stride 2, pad 1: four windows, each a 2x2
// corner of the plane (PyTorch: MaxPool2d(3, 2, 1) and AvgPool2d(3, 2, 1)).
TEST(CpuPaddedPool, CornersOfAThreeByThreePlane) {
  CpuBackend be(1);
  const std::vector<float> in = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  auto x = MakeBuffer(be, in);
  auto out = be.Allocate(4);
  auto argmax = be.Allocate(4);
  PoolGeometry g = Geometry(1, 1, 3, 3, 3, 2, 1, false);
  ASSERT_EQ(g.out_h(), 2);
  be.MaxPoolForward(g, WholeOf(*x), WholeOf(*out), WholeOf(*argmax));
  EXPECT_EQ(ToHost(be, *out), (std::vector<float>{5, 6, 8, 9}));
  EXPECT_EQ(ToHostInt(be, *argmax), (std::vector<int32_t>{4, 5, 7, 8}));
  // Each corner's mean over its 4 inputs, or over 9 cells counting the padding.
  be.AvgPoolForward(g, WholeOf(*x), WholeOf(*out));
  EXPECT_EQ(ToHost(be, *out), (std::vector<float>{3, 4, 6, 7}));
  g.count_pad = true;
  be.AvgPoolForward(g, WholeOf(*x), WholeOf(*out));
  const std::vector<float> counted = ToHost(be, *out);
  const float want[] = {12.0f / 9, 16.0f / 9, 24.0f / 9, 28.0f / 9};
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(counted[i], want[i]) << i;
  // Backward spreads each gradient over its window's inputs only.
  auto d_out = MakeBuffer(be, {9, 9, 9, 9});
  auto d_in = be.Allocate(9);
  be.AvgPoolBackward(g, WholeOf(*d_out), WholeOf(*d_in));
  EXPECT_EQ(ToHost(be, *d_in), (std::vector<float>{1, 2, 1, 2, 4, 2, 1, 2, 1}));
  // A maximum below zero is still the maximum: the padding is not a zero.
  auto neg = MakeBuffer(be, {-1, -2, -3, -4, -5, -6, -7, -8, -9});
  be.MaxPoolForward(g, WholeOf(*neg), WholeOf(*out), WholeOf(*argmax));
  EXPECT_EQ(ToHost(be, *out), (std::vector<float>{-1, -2, -4, -5}));
}

// The padded kernels against a direct sum over each clipped window, on
// several threads and overlapping windows.
TEST(CpuPaddedPool, MatchesADirectReference) {
  CpuBackend be(3);
  for (bool count_pad : {false, true}) {
    const PoolGeometry g = Geometry(3, 4, 9, 7, 3, 2, 1, count_pad);
    const std::vector<float> in = RandomVector(size_t(3) * 4 * 9 * 7, 11);
    auto x = MakeBuffer(be, in);
    auto out = be.Allocate(size_t(g.batch) * g.out_size());
    be.AvgPoolForward(g, WholeOf(*x), WholeOf(*out));
    const std::vector<float> got = ToHost(be, *out);
    for (int p = 0; p < g.batch * g.channels; ++p)
      for (int oy = 0; oy < g.out_h(); ++oy)
        for (int ox = 0; ox < g.out_w(); ++ox) {
          double sum = 0;
          int cells = 0;
          for (int ky = 0; ky < g.size; ++ky)
            for (int kx = 0; kx < g.size; ++kx) {
              const int iy = oy * g.stride - g.pad + ky, ix = ox * g.stride - g.pad + kx;
              if (iy < 0 || ix < 0 || iy >= g.in_h || ix >= g.in_w) continue;
              sum += in[size_t(p) * g.in_h * g.in_w + iy * g.in_w + ix];
              ++cells;
            }
          const double want = sum / (count_pad ? g.size * g.size : cells);
          EXPECT_NEAR(got[(size_t(p) * g.out_h() + oy) * g.out_w() + ox], want, 1e-5);
        }
  }
}

TEST(CpuRowScale, ScalesRowsAndGivesBothGradients) {
  CpuBackend be(2);
  // Two rows of three: x * [2, -1].
  auto x = MakeBuffer(be, {1, 2, 3, 4, 5, 6});
  auto s = MakeBuffer(be, {2, -1});
  auto out = be.Allocate(6);
  test_support::kRowScaleForward(be, WholeOf(*x), WholeOf(*s), WholeOf(*out), 2, 3);
  EXPECT_EQ(ToHost(be, *out), (std::vector<float>{2, 4, 6, -4, -5, -6}));
  auto d_out = MakeBuffer(be, {1, 1, 1, 0, 1, 2});
  auto d_x = be.Allocate(6);
  auto d_s = be.Allocate(2);
  test_support::kRowScaleBackward(be, WholeOf(*x), WholeOf(*s), WholeOf(*d_out), WholeOf(*d_x),
                                  WholeOf(*d_s), 2, 3);
  EXPECT_EQ(ToHost(be, *d_x), (std::vector<float>{2, 2, 2, 0, -1, -2}));
  EXPECT_EQ(ToHost(be, *d_s), (std::vector<float>{6, 17}));
  // An empty d_x: only the scale's gradient.
  be.Fill(WholeOf(*d_s), 0);
  test_support::kRowScaleBackward(be, WholeOf(*x), WholeOf(*s), WholeOf(*d_out), View{},
                                  WholeOf(*d_s), 2, 3);
  EXPECT_EQ(ToHost(be, *d_s), (std::vector<float>{6, 17}));
}

}  // namespace
}  // namespace mt::kernels
