// The channel-tiled depthwise kernels (kernels/cpu/depthwise_tiled.h) against
// a double-precision reference on the shapes where a tile is partly empty or
// a border case decides the result: planes of 1x1, 2x2, 5x5 and 7x7, stride 2
// on odd sizes, padding 0 and 1, channel counts that fill no whole vector,
// multipliers 1 to 3, planes done in several bands of rows, batch 1 and
// batches that end in a partial sample group;
// 1, 2 and 3 threads, with the gradients' bits the same on each; called
// directly and through the depthwise entry points. Also the transposes
// between planes and tiles on their own.
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "kernels/cpu/channel_tile.h"
#include "kernels/cpu/depthwise_conv.h"
#include "kernels/cpu/depthwise_tiled.h"
#include "kernels/cpu/thread_pool.h"
#include "tests/kernels/cpu_test_util.h"
#include "tests/kernels/reference_conv.h"

namespace mt::kernels {
namespace {

using simd::kLanes;
using test_reference::Ref;
using test_reference::ReferenceConv;
using test_support::MaxRelativeError;
using test_support::RandomVector;

struct TiledCase {
  const char* name;
  int batch, channels, h, w, multiplier, kernel, stride, pad;
};

const TiledCase kCases[] = {
    {"k3s1_8x8_c16", 3, 16, 8, 8, 1, 3, 1, 1},
    {"k3s1_7x7_c21", 2, 21, 7, 7, 1, 3, 1, 1},
    {"k3s1_5x5_nopad", 2, 5, 5, 5, 1, 3, 1, 0},
    {"k3s1_1x1", 3, 7, 1, 1, 1, 3, 1, 1},
    {"k3s1_2x2", 2, 9, 2, 2, 1, 3, 1, 1},
    {"k3s1_4x4_batch1", 1, 24, 4, 4, 1, 3, 1, 1},
    {"k3s1_3x11", 2, 6, 3, 11, 1, 3, 1, 1},
    {"k3s2_8x8", 2, 16, 8, 8, 1, 3, 2, 1},
    {"k3s2_7x7_c21", 2, 21, 7, 7, 1, 3, 2, 1},
    {"k3s2_9x5_nopad", 2, 5, 9, 5, 1, 3, 2, 0},
    {"k3s2_4x4", 3, 17, 4, 4, 1, 3, 2, 1},
    {"k3s2_2x2", 2, 6, 2, 2, 1, 3, 2, 1},
    {"k3s2_1x1", 2, 3, 1, 1, 1, 3, 2, 1},
    {"k3s2_6x13", 1, 4, 6, 13, 1, 3, 2, 1},
    {"k3s1_m2", 2, 5, 6, 6, 2, 3, 1, 1},
    {"k3s2_m3", 2, 3, 7, 5, 3, 3, 2, 1},
    {"k5s1_7x7", 2, 6, 7, 7, 1, 5, 1, 2},
    {"k5s1_2x2", 2, 3, 2, 2, 1, 5, 1, 2},
    {"k5s2_9x9_nopad", 2, 5, 9, 9, 1, 5, 2, 0},
    {"k5s2_5x5_m2", 2, 4, 5, 5, 2, 5, 2, 2},
    {"k5s2_8x8_pad1", 2, 3, 8, 8, 1, 5, 2, 1},
    // Planes large enough to be transposed in several bands of rows.
    {"k3s1_bands", 2, 18, 40, 20, 1, 3, 1, 1},
    {"k3s2_bands", 2, 5, 41, 33, 1, 3, 2, 1},
    {"k5s2_m2_bands", 1, 3, 37, 19, 2, 5, 2, 2},
    // Batches that fill two sample groups and part of a third.
    {"k3s1_batch19", 19, 20, 4, 4, 1, 3, 1, 1},
    {"k3s2_batch17_m2", 17, 9, 5, 5, 2, 3, 2, 1},
};

void PrintTo(const TiledCase& c, std::ostream* os) { *os << c.name; }

ConvGeometry GeometryOf(const TiledCase& c) {
  ConvGeometry g;
  g.batch = c.batch;
  g.in_c = g.groups = c.channels;
  g.out_c = c.channels * c.multiplier;
  g.in_h = c.h;
  g.in_w = c.w;
  g.kernel = c.kernel;
  g.stride = c.stride;
  g.pad = c.pad;
  return g;
}

// The tiled kernels called directly, and through the depthwise entry points,
// which send some directions of wide planes to the row kernels instead.
struct Path {
  const char* name;
  size_t (*workspace)(const ConvGeometry&, int);
  decltype(&DepthwiseConvForward) forward;
  decltype(&DepthwiseConvBackward) backward;
};
const Path kPaths[] = {
    {"tiled", DepthwiseTiledWorkspaceFloats, DepthwiseTiledForward, DepthwiseTiledBackward},
    {"entry", DepthwiseConvWorkspaceFloats, DepthwiseConvForward, DepthwiseConvBackward},
};

class DepthwiseTiled : public ::testing::TestWithParam<TiledCase> {};

TEST_P(DepthwiseTiled, MatchesReferenceOnAnyThreadCount) {
  const ConvGeometry g = GeometryOf(GetParam());
  ASSERT_TRUE(DepthwiseTiledHandles(g));
  const auto in = RandomVector(size_t(g.batch) * g.in_size(), 1);
  const auto w = RandomVector(g.weight_count(), 2);
  const auto b = RandomVector(g.out_c, 3);
  const auto dy = RandomVector(size_t(g.batch) * g.out_size(), 4);
  const Ref want = ReferenceConv(g, in, w, b, dy);
  const Ref want_no_bias = ReferenceConv(g, in, w, {}, dy);
  const double tol = 1e-5;
  for (const Path& path : kPaths) {
    std::vector<float> first_dw, first_db, first_dx;
    for (const int threads : {1, 2, 3}) {
      SCOPED_TRACE(std::string(path.name) + ", threads " + std::to_string(threads));
      ThreadPool pool(threads);
      // Garbage in the workspace and outputs: the kernels must set all of them.
      auto ws = RandomVector(path.workspace(g, threads), 5);
      auto out = RandomVector(want.out.size(), 6);
      path.forward(pool, g, in.data(), w.data(), b.data(), out.data(), ws.data());
      EXPECT_LT(MaxRelativeError(out, want.out), tol) << "forward";
      path.forward(pool, g, in.data(), w.data(), nullptr, out.data(), ws.data());
      EXPECT_LT(MaxRelativeError(out, want_no_bias.out), tol) << "forward, no bias";

      auto dx = RandomVector(want.d_in.size(), 7), dw = RandomVector(want.d_weight.size(), 8);
      auto db = RandomVector(want.d_bias.size(), 9);
      path.backward(pool, g, in.data(), w.data(), dy.data(), dx.data(), dw.data(), db.data(),
                    ws.data());
      EXPECT_LT(MaxRelativeError(dx, want.d_in), tol) << "d_in";
      EXPECT_LT(MaxRelativeError(dw, want.d_weight), tol) << "d_weight";
      EXPECT_LT(MaxRelativeError(db, want.d_bias), tol) << "d_bias";
      if (first_dw.empty()) {
        first_dw = dw, first_db = db, first_dx = dx;
      } else {
        EXPECT_EQ(dw, first_dw);
        EXPECT_EQ(db, first_db);
        EXPECT_EQ(dx, first_dx);
      }

      // A first layer (no d_in) and a frozen one (d_in only, gradients untouched).
      auto dw2 = RandomVector(want.d_weight.size(), 10);
      path.backward(pool, g, in.data(), w.data(), dy.data(), nullptr, dw2.data(), nullptr,
                    ws.data());
      EXPECT_EQ(dw2, first_dw) << "d_weight alone";
      auto dx2 = RandomVector(want.d_in.size(), 11);
      const auto db_before = RandomVector(want.d_bias.size(), 12);
      auto db2 = db_before;
      path.backward(pool, g, in.data(), w.data(), dy.data(), dx2.data(), nullptr, db2.data(),
                    ws.data());
      EXPECT_EQ(dx2, first_dx) << "d_in alone";
      EXPECT_EQ(db2, db_before) << "frozen: d_bias untouched";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, DepthwiseTiled, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<TiledCase>& info) {
                           return std::string(info.param.name);
                         });

// Shapes outside the tiled kernels' reach stay with the per-plane kernels.
TEST(DepthwiseTiled, LeavesOtherKernelsAndStrides) {
  ConvGeometry g = GeometryOf(kCases[0]);
  EXPECT_TRUE(DepthwiseTiledHandles(g));
  g.kernel = 7;
  g.pad = 3;
  EXPECT_FALSE(DepthwiseTiledHandles(g));
  g = GeometryOf(kCases[0]);
  g.stride = 3;
  EXPECT_FALSE(DepthwiseTiledHandles(g));
  g = GeometryOf(kCases[0]);
  g.groups = 8;  // grouped, not depthwise
  EXPECT_FALSE(DepthwiseTiledHandles(g));
}

// Tile pixel p lane i holds plane i's pixel p, zero past the valid lanes, at
// the cursor's place (here a tile with a one-pixel border); and back.
TEST(ChannelTile, PlanesToTileAndBack) {
  for (const int n_w : {1, 3, 5}) {
    for (const int valid : {1, kLanes - 1, kLanes}) {
      for (const int h : {1, 4, kLanes + 1}) {
        const int n = h * n_w, stride = n + 3, row = n_w + 2;
        const auto planes = RandomVector(size_t(kLanes) * stride, 21);
        std::vector<float> tile(size_t(h + 2) * row * kLanes, -7.0f);
        float* interior = tile.data() + (row + 1) * kLanes;
        channel_tile::PlanesToTile(planes.data(), stride, valid, n, {interior, 0, n_w, row});
        for (int y = 0; y < h + 2; ++y) {
          for (int x = 0; x < row; ++x) {
            const bool inside = y >= 1 && y <= h && x >= 1 && x <= n_w;
            for (int i = 0; i < kLanes; ++i) {
              const float got = tile[(size_t(y) * row + x) * kLanes + i];
              const int p = (y - 1) * n_w + (x - 1);
              const float want = !inside ? -7.0f : i < valid ? planes[i * stride + p] : 0.0f;
              ASSERT_EQ(got, want) << "n_w " << n_w << " h " << h << " valid " << valid << " y "
                                   << y << " x " << x << " lane " << i;
            }
          }
        }
        std::vector<float> back(planes.size(), -9.0f);
        channel_tile::TileToPlanes({interior, 0, n_w, row}, n, valid, stride, back.data());
        for (int i = 0; i < kLanes; ++i) {
          for (int p = 0; p < stride; ++p) {
            const float want = i < valid && p < n ? planes[i * stride + p] : -9.0f;
            ASSERT_EQ(back[i * stride + p], want) << "lane " << i << " pixel " << p;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace mt::kernels
