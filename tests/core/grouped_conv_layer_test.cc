// The Conv2D layer with groups (depthwise with multipliers 1 and 2, general
// grouped), without bias and frozen: numerical gradient checks on every
// backend, the parameter layout, the ops it declares and its validation.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/layers/conv2d.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/support/backend_test.h"
#include "tests/support/gradient_check.h"
#include "tests/support/test_backends.h"

namespace mt {
namespace {

using test_support::CheckLayerGradients;
using test_support::RandomVector;

class GroupedConvLayer : public test_support::BackendTest {};

TEST_P(GroupedConvLayer, DepthwiseGradients) {
  Conv2D conv(4, 3, 1, 1, /*groups=*/4);
  CheckLayerGradients(conv, Shape{4, 6, 5}, 2, backend(), RandomVector(2 * 4 * 6 * 5, 3));
}

TEST_P(GroupedConvLayer, DepthwiseMultiplierTwoGradients) {
  Conv2D conv(6, 3, 1, 1, /*groups=*/3);
  CheckLayerGradients(conv, Shape{3, 5, 5}, 2, backend(), RandomVector(2 * 3 * 5 * 5, 4));
}

TEST_P(GroupedConvLayer, DepthwiseStride2Gradients) {
  Conv2D conv(3, 3, 2, 1, /*groups=*/3);
  CheckLayerGradients(conv, Shape{3, 7, 9}, 3, backend(), RandomVector(3 * 3 * 7 * 9, 5));
}

TEST_P(GroupedConvLayer, DepthwiseKernel5Stride2Gradients) {
  Conv2D conv(2, 5, 2, 2, /*groups=*/2);
  CheckLayerGradients(conv, Shape{2, 8, 8}, 2, backend(), RandomVector(2 * 2 * 8 * 8, 6));
}

// The 4x4, 2x2 and 1x1 planes of a network's last blocks, stride 2 on an odd
// plane, and a channel count that fills no whole vector (the CPU kernels work
// on tiles of channels).
TEST_P(GroupedConvLayer, DepthwiseSmallPlaneGradients) {
  Conv2D s2(5, 3, 2, 1, /*groups=*/5);
  CheckLayerGradients(s2, Shape{5, 4, 4}, 2, backend(), RandomVector(2 * 5 * 4 * 4, 10));
  Conv2D odd(5, 3, 2, 1, /*groups=*/5);
  CheckLayerGradients(odd, Shape{5, 5, 5}, 1, backend(), RandomVector(1 * 5 * 5 * 5, 11));
  Conv2D tiny(5, 3, 1, 1, /*groups=*/5);
  CheckLayerGradients(tiny, Shape{5, 2, 2}, 3, backend(), RandomVector(3 * 5 * 2 * 2, 12));
  Conv2D one(5, 3, 1, 1, /*groups=*/5);
  CheckLayerGradients(one, Shape{5, 1, 1}, 2, backend(), RandomVector(2 * 5 * 1 * 1, 13));
}

TEST_P(GroupedConvLayer, TwoGroupsGradients) {
  Conv2D conv(6, 3, 1, 1, /*groups=*/2);
  CheckLayerGradients(conv, Shape{4, 5, 6}, 2, backend(), RandomVector(2 * 4 * 5 * 6, 7));
}

TEST_P(GroupedConvLayer, NoBiasGradients) {
  Conv2D dw(4, 3, 1, 1, /*groups=*/4, /*bias=*/false);
  CheckLayerGradients(dw, Shape{4, 5, 5}, 2, backend(), RandomVector(2 * 4 * 5 * 5, 8));
  Conv2D plain(3, 3, 2, 1, /*groups=*/1, /*bias=*/false);
  CheckLayerGradients(plain, Shape{2, 6, 6}, 2, backend(), RandomVector(2 * 2 * 6 * 6, 9));
}

// A frozen layer's Backward leaves the gradient buffer as it was (zero) and
// gives the same input gradient as an unfrozen one.
TEST_P(GroupedConvLayer, FrozenLeavesWeightGradientsZero) {
  struct Case {
    int filters, kernel, stride, pad, groups;
  };
  for (const Case c :
       {Case{4, 3, 1, 1, 4}, Case{6, 3, 2, 1, 2}, Case{5, 3, 1, 1, 1}, Case{5, 3, 2, 1, 1}}) {
    SCOPED_TRACE("groups " + std::to_string(c.groups) + " stride " + std::to_string(c.stride));
    kernels::Backend& be = backend();
    Conv2D conv(c.filters, c.kernel, c.stride, c.pad, c.groups);
    conv.set_backend(&be);
    const Shape in_sample{4, 7, 7};
    const Shape out_sample = conv.Setup(in_sample);
    const int batch = 3;
    const size_t p_n = conv.ParamCount();
    auto params = be.Allocate(p_n), grads = be.Allocate(p_n);
    conv.BindParams(kernels::WholeOf(*params), kernels::WholeOf(*grads));
    auto workspace = be.Allocate(conv.WorkspaceFloats(batch));
    conv.BindWorkspace(kernels::WholeOf(*workspace));
    const auto p_host = RandomVector(p_n, 21);
    be.Upload(p_host.data(), kernels::WholeOf(*params));
    const size_t in_n = in_sample.count() * batch, out_n = out_sample.count() * batch;
    auto in_b = be.Allocate(in_n), out_b = be.Allocate(out_n), d_out_b = be.Allocate(out_n);
    auto d_in_b = be.Allocate(in_n);
    const auto x = RandomVector(in_n, 22), dy = RandomVector(out_n, 23);
    be.Upload(x.data(), kernels::WholeOf(*in_b));
    be.Upload(dy.data(), kernels::WholeOf(*d_out_b));
    const Tensor in{in_sample.WithBatch(batch), kernels::WholeOf(*in_b)};
    const Tensor out{out_sample.WithBatch(batch), kernels::WholeOf(*out_b)};
    const Tensor d_out{out.shape, kernels::WholeOf(*d_out_b)};
    const Tensor d_in{in.shape, kernels::WholeOf(*d_in_b)};
    conv.Forward(in, out, ForwardContext{});

    std::vector<float> d_in_unfrozen(in_n), d_in_frozen(in_n), g(p_n);
    conv.Backward(in, out, d_out, d_in);
    be.Download(d_in.view, d_in_unfrozen.data());

    be.Fill(kernels::WholeOf(*grads), 0.0f);
    be.Fill(d_in.view, 0.0f);
    conv.set_frozen(true);
    conv.Backward(in, out, d_out, d_in);
    be.Download(d_in.view, d_in_frozen.data());
    be.Download(kernels::WholeOf(*grads), g.data());
    EXPECT_EQ(d_in_frozen, d_in_unfrozen);
    EXPECT_EQ(g, std::vector<float>(p_n, 0.0f));

    // Frozen with no input gradient wanted (a first layer): nothing at all.
    conv.Backward(in, out, d_out, Tensor{in.shape, kernels::View{}});
    be.Download(kernels::WholeOf(*grads), g.data());
    EXPECT_EQ(g, std::vector<float>(p_n, 0.0f));
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, GroupedConvLayer, ::testing::Values("cpu1", "cpu3", "opencl"),
                         [](const auto& info) { return info.param; });

TEST(GroupedConvLayerSetup, ParamLayoutAndOps) {
  Conv2D dw(32, 3, 1, 1, /*groups=*/16);  // depthwise, multiplier 2
  EXPECT_EQ(dw.Setup(Shape{16, 8, 8}), (Shape{32, 8, 8}));
  EXPECT_EQ(dw.ParamCount(), 32u * 1 * 3 * 3 + 32);
  EXPECT_TRUE(dw.Ops().Has(kernels::Op::kGroupedConv2d));

  Conv2D grouped(8, 3, 1, 1, /*groups=*/2, /*bias=*/false);
  grouped.Setup(Shape{4, 8, 8});
  EXPECT_EQ(grouped.ParamCount(), 8u * 2 * 3 * 3);
  EXPECT_FALSE(grouped.has_bias());

  Conv2D plain(8, 3, 1, 1);
  plain.Setup(Shape{4, 8, 8});
  EXPECT_EQ(plain.ParamCount(), 8u * 4 * 3 * 3 + 8);
  EXPECT_FALSE(plain.Ops().Has(kernels::Op::kGroupedConv2d));
}

// The message names the numbers that do not fit.
void ExpectInvalid(const std::function<void()>& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no exception; wanted one naming " << needle;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(GroupedConvLayerSetup, RejectsChannelsThatDoNotDivide) {
  ExpectInvalid([] { Conv2D(6, 3, 1, 1, 4); }, "filters 6");
  ExpectInvalid([] { Conv2D(6, 3, 1, 1, 0); }, "groups 0");
  ExpectInvalid([] { Conv2D(6, 3, 1, 1, -2); }, "groups -2");
  ExpectInvalid(
      [] {
        Conv2D conv(6, 3, 1, 1, 3);
        conv.Setup(Shape{4, 8, 8});
      },
      "4 input channels");
}

}  // namespace
}  // namespace mt
