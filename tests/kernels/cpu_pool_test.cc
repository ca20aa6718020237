#include <gtest/gtest.h>

#include <limits>
#include <ostream>
#include <string>
#include <tuple>

#include "kernels/cpu/cpu_backend.h"
#include "tests/kernels/cpu_test_util.h"

namespace mt::kernels {
namespace {

using test_support::MakeBuffer;
using test_support::MaxRelativeError;
using test_support::RandomVector;
using test_support::ToHost;
using test_support::ToHostInt;

struct PoolCase {
  const char* name;
  PoolGeometry g;
};

void PrintTo(const PoolCase& c, std::ostream* os) { *os << c.name; }

// batch, channels, in_h, in_w, size, stride
const PoolCase kCases[] = {
    {"lenet_pool1", {64, 6, 28, 28, 2, 2}},  {"lenet_pool2", {64, 16, 10, 10, 2, 2}},
    {"odd_input", {3, 2, 7, 9, 2, 2}},       {"rows_of_8", {3, 2, 16, 16, 2, 2}},
    {"rows_of_16", {2, 3, 32, 32, 2, 2}},    {"rows_of_17", {2, 2, 6, 34, 2, 2}},
    {"overlapping_3s2", {2, 3, 9, 8, 3, 2}}, {"size3_stride3", {2, 2, 9, 10, 3, 3}},
    {"stride1", {2, 2, 5, 6, 2, 1}},         {"batch1_global", {1, 4, 6, 6, 6, 1}},
};

// Index of the first maximum (row-major) of each window, within its plane.
void ReferencePool(const PoolGeometry& g, const std::vector<float>& in, std::vector<double>* out,
                   std::vector<int32_t>* argmax) {
  const int oh = g.out_h(), ow = g.out_w();
  out->assign(size_t(g.batch) * g.out_size(), 0.0);
  argmax->assign(out->size(), -1);
  for (int p = 0; p < g.batch * g.channels; ++p) {
    const float* plane = in.data() + size_t(p) * g.in_h * g.in_w;
    for (int oy = 0; oy < oh; ++oy) {
      for (int ox = 0; ox < ow; ++ox) {
        int best = -1;
        for (int ky = 0; ky < g.size; ++ky) {
          for (int kx = 0; kx < g.size; ++kx) {
            const int i = (oy * g.stride + ky) * g.in_w + ox * g.stride + kx;
            if (best < 0 || plane[i] > plane[best]) best = i;
          }
        }
        const size_t o = size_t(p) * oh * ow + oy * ow + ox;
        (*out)[o] = plane[best];
        (*argmax)[o] = best;
      }
    }
  }
}

class CpuPoolTest : public ::testing::TestWithParam<std::tuple<int, PoolCase, bool>> {};

TEST_P(CpuPoolTest, ForwardAndBackwardMatchReference) {
  const int threads = std::get<0>(GetParam());
  const PoolGeometry g = std::get<1>(GetParam()).g;
  const bool ties = std::get<2>(GetParam());
  auto in = RandomVector(size_t(g.batch) * g.in_size(), 21);
  if (ties) {
    // Few distinct values, so most windows hold a tied maximum.
    for (float& v : in) v = std::floor(v * 1.5f);
  }
  std::vector<double> want_out;
  std::vector<int32_t> want_arg;
  ReferencePool(g, in, &want_out, &want_arg);

  CpuBackend be(threads);
  auto inb = MakeBuffer(be, in);
  auto out = be.Allocate(want_out.size()), arg = be.Allocate(want_out.size());
  be.MaxPoolForward(g, WholeOf(*inb), WholeOf(*out), WholeOf(*arg));
  EXPECT_EQ(MaxRelativeError(ToHost(be, *out), want_out), 0.0);
  EXPECT_EQ(ToHostInt(be, *arg), want_arg);

  const auto d_out = RandomVector(want_out.size(), 22);
  std::vector<double> want_din(in.size(), 0.0);
  const int plane_in = g.in_h * g.in_w, plane_out = g.out_h() * g.out_w();
  for (size_t o = 0; o < d_out.size(); ++o) {
    want_din[(o / plane_out) * plane_in + want_arg[o]] += d_out[o];
  }
  auto dob = MakeBuffer(be, d_out);
  auto d_in =
      MakeBuffer(be, std::vector<float>(in.size(), std::numeric_limits<float>::quiet_NaN()));
  be.MaxPoolBackward(g, WholeOf(*dob), WholeOf(*arg), WholeOf(*d_in));
  EXPECT_LE(MaxRelativeError(ToHost(be, *d_in), want_din), 1e-6);
}

INSTANTIATE_TEST_SUITE_P(Grid, CpuPoolTest,
                         ::testing::Combine(::testing::Values(1, 3), ::testing::ValuesIn(kCases),
                                            ::testing::Bool()),
                         [](const auto& info) {
                           return std::string(std::get<1>(info.param).name) +
                                  (std::get<2>(info.param) ? "_ties" : "") + "_t" +
                                  std::to_string(std::get<0>(info.param));
                         });

TEST(CpuPool, TieGoesToFirstMaximumInRowMajorOrder) {
  CpuBackend be(1);
  const PoolGeometry g{1, 1, 2, 2, 2, 2};
  for (int first : {0, 1, 2, 3}) {
    std::vector<float> in(4, 0.0f);
    for (int i = first; i < 4; ++i) in[i] = 5.0f;  // maxima at first..3
    auto inb = MakeBuffer(be, in);
    auto out = be.Allocate(1), arg = be.Allocate(1);
    be.MaxPoolForward(g, WholeOf(*inb), WholeOf(*out), WholeOf(*arg));
    EXPECT_EQ(ToHostInt(be, *arg)[0], first);
    EXPECT_EQ(ToHost(be, *out)[0], 5.0f);
  }
}

}  // namespace
}  // namespace mt::kernels
