// Numerical gradient checks for every layer on every backend: the CPU one
// (1 and 3 threads) and the OpenCL one (skipped where there is none).
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "core/layers/conv2d.h"
#include "core/layers/dense.h"
#include "core/layers/dropout.h"
#include "core/layers/flatten.h"
#include "core/layers/max_pool2d.h"
#include "core/layers/relu.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/support/backend_test.h"
#include "tests/support/gradient_check.h"
#include "tests/support/test_backends.h"

namespace mt {
namespace {

using test_support::CheckLayerGradients;
using test_support::RandomVector;

// Distinct values spaced wider than the perturbation, so no max-pool choice
// flips inside a central difference.
std::vector<float> DistinctValues(size_t n, uint64_t seed) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), 0.0f);
  Rng rng(seed);
  for (size_t i = n; i > 1; --i) std::swap(v[i - 1], v[rng.Below(i)]);
  for (auto& x : v) x = (x - n / 2.0f) * 0.05f;
  return v;
}

class LayerGradients : public test_support::BackendTest {};

TEST_P(LayerGradients, Conv2DPadded) {
  Conv2D conv(4, 3, 1, 1);
  CheckLayerGradients(conv, Shape{2, 5, 6}, 2, backend(), RandomVector(2 * 2 * 5 * 6, 3));
}

TEST_P(LayerGradients, Conv2DStride2OddSize) {
  Conv2D conv(3, 3, 2, 0);
  CheckLayerGradients(conv, Shape{3, 7, 9}, 3, backend(), RandomVector(3 * 3 * 7 * 9, 4));
}

TEST_P(LayerGradients, Conv2DBatchOneLeNetFirstLayer) {
  Conv2D conv(6, 5, 1, 2);
  CheckLayerGradients(conv, Shape{1, 12, 12}, 1, backend(), RandomVector(144, 5));
}

// Whole vectors of channels in and out: the CPU backend's 3x3 kernel.
TEST_P(LayerGradients, Conv2DChannelVectors) {
  Conv2D conv(16, 3, 1, 1);
  CheckLayerGradients(conv, Shape{16, 5, 7}, 3, backend(), RandomVector(3 * 16 * 5 * 7, 7));
}

// RGB in: the 3x3 kernel's weight gradient, another path's input gradient.
TEST_P(LayerGradients, Conv2DRgbToChannelVectors) {
  Conv2D conv(16, 3, 1, 1);
  CheckLayerGradients(conv, Shape{3, 6, 5}, 2, backend(), RandomVector(2 * 3 * 6 * 5, 8));
}

// Pointwise on planes of whole vectors: the CPU backend's 1x1 kernel, with
// channel counts off its register blocks.
TEST_P(LayerGradients, Conv2DPointwise) {
  Conv2D conv(5, 1, 1, 0);
  CheckLayerGradients(conv, Shape{7, 4, 8}, 3, backend(), RandomVector(3 * 7 * 4 * 8, 9));
}

TEST_P(LayerGradients, Dense) {
  Dense dense(7);
  CheckLayerGradients(dense, Shape{13}, 4, backend(), RandomVector(4 * 13, 6));
}

TEST_P(LayerGradients, MaxPool) {
  MaxPool2D pool(2, 2);
  CheckLayerGradients(pool, Shape{3, 6, 6}, 2, backend(), DistinctValues(2 * 3 * 36, 7));
}

TEST_P(LayerGradients, MaxPoolOverlappingOddInput) {
  MaxPool2D pool(3, 2);
  CheckLayerGradients(pool, Shape{2, 7, 5}, 2, backend(), DistinctValues(2 * 2 * 35, 8));
}

TEST_P(LayerGradients, ReLU) {
  ReLU relu;
  CheckLayerGradients(relu, Shape{4, 3, 3}, 3, backend(), RandomVector(3 * 36, 9));
}

TEST_P(LayerGradients, Flatten) {
  Flatten flatten;
  CheckLayerGradients(flatten, Shape{2, 3, 3}, 2, backend(), RandomVector(36, 10));
}

TEST_P(LayerGradients, Dropout) {
  Dropout dropout(0.4f);
  CheckLayerGradients(dropout, Shape{50}, 4, backend(), RandomVector(200, 11));
}

INSTANTIATE_TEST_SUITE_P(Backends, LayerGradients, ::testing::Values("cpu1", "cpu3", "opencl"),
                         [](const auto& info) { return info.param; });

TEST(LayerSetup, RejectsShapesThatDoNotFit) {
  kernels::CpuBackend backend;
  Conv2D conv(4, 7, 1, 0);
  conv.set_backend(&backend);
  EXPECT_THROW(conv.Setup(Shape{1, 5, 5}), std::invalid_argument);
  Dense dense(3);
  EXPECT_THROW(dense.Setup(Shape{1, 5, 5}), std::invalid_argument);
  EXPECT_THROW(Dropout(1.0f), std::invalid_argument);
  EXPECT_THROW(Conv2D(0, 3, 1, 0), std::invalid_argument);
}

TEST(LayerSetup, OutputShapes) {
  Conv2D conv(6, 5, 1, 2);
  EXPECT_EQ(conv.Setup(Shape{1, 28, 28}), (Shape{6, 28, 28}));
  MaxPool2D pool(2, 2);
  EXPECT_EQ(pool.Setup(Shape{6, 28, 28}), (Shape{6, 14, 14}));
  Conv2D conv2(16, 5, 1, 0);
  EXPECT_EQ(conv2.Setup(Shape{6, 14, 14}), (Shape{16, 10, 10}));
  Flatten flat;
  EXPECT_EQ(flat.Setup(Shape{16, 5, 5}), (Shape{400}));
}

}  // namespace
}  // namespace mt
