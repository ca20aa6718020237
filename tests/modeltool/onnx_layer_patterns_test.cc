// ONNX forms of the newer layer kinds that a round trip of mt's own export
// does not produce: ReduceMean over H and W (both keepdims), a Concat of
// graph tensors along the channels beside a Concat of shape constants,
// HardSwish as the opset-14 op, and the Mul patterns that are not SiLU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model_io/onnx_import.h"
#include "tests/modeltool/model_io_fixtures.h"

namespace mt {
namespace {

using test_support::Iota;
using test_support::OnnxBuilder;
using ::testing::HasSubstr;

std::string ImportError(const std::string& bytes) {
  try {
    ImportOnnxBytes(bytes, "p.onnx");
  } catch (const OnnxError& e) {
    return e.what();
  }
  return "imported";
}

TEST(OnnxLayerPatterns, ReduceMeanOverHWIsAGlobalAveragePoolEitherKeepdims) {
  for (int keepdims : {0, 1}) {
    OnnxBuilder b({2, 4, 4});
    auto& mean = b.Node("ReduceMean", "mean", {"x"}, "m");
    test_support::SetInts(mean, "axes", {2, 3});
    test_support::SetInt(mean, "keepdims", keepdims);
    std::string flat = "m";
    if (keepdims) {  // [N, C, 1, 1] as ONNX keeps it: the Flatten after makes no layer
      b.Node("Flatten", "flatten", {"m"}, "f");
      flat = "f";
    }
    b.Weight("w", {3, 2}, Iota(6));
    auto& gemm = b.Node("Gemm", "fc", {flat, "w"}, "y");
    test_support::SetInt(gemm, "transB", 1);
    b.Output("y");
    const LoadedModel m = ImportOnnxBytes(b.Bytes(), "mean.onnx");
    ASSERT_EQ(m.spec.layer_size(), 2) << keepdims;
    EXPECT_TRUE(m.spec.layer(0).has_global_avgpool());
    EXPECT_EQ(m.spec.layer(1).dense().units(), 3);
  }
  OnnxBuilder b({2, 4, 4});
  test_support::SetInts(b.Node("ReduceMean", "mean", {"x"}, "m"), "axes", {1});
  b.Output("m");
  EXPECT_THAT(ImportError(b.Bytes()), HasSubstr("only a mean over H and W"));
}

TEST(OnnxLayerPatterns, ConcatAlongChannelsIsAConcatLayer) {
  OnnxBuilder b({2, 4, 4});
  b.Weight("w", {3, 2, 1, 1}, Iota(6));
  b.Node("Conv", "conv", {"x", "w"}, "c");
  test_support::SetInt(b.Node("Concat", "cat", {"x", "c"}, "cat_out"), "axis", 1);
  b.Node("GlobalAveragePool", "gap", {"cat_out"}, "g");
  b.Node("Flatten", "flatten", {"g"}, "f");
  b.Weight("fc.w", {2, 5}, Iota(10));
  auto& gemm = b.Node("Gemm", "fc", {"f", "fc.w"}, "y");
  test_support::SetInt(gemm, "transB", 1);
  b.Output("y");
  const LoadedModel m = ImportOnnxBytes(b.Bytes(), "cat.onnx");
  ASSERT_EQ(m.spec.layer_size(), 4);
  EXPECT_TRUE(m.spec.layer(1).has_concat());
  EXPECT_THAT(m.spec.layer(1).inputs(), ::testing::ElementsAre("input", "conv"));

  OnnxBuilder other({2, 4, 4});
  test_support::SetInt(other.Node("Concat", "cat", {"x", "x"}, "y"), "axis", 2);
  other.Output("y");
  EXPECT_THAT(ImportError(other.Bytes()),
              HasSubstr("only axis 1 (channels, or features) is supported"));
}

TEST(OnnxLayerPatterns, HardSwishOpOfOpset14) {
  OnnxBuilder b({2, 4, 4}, 14);
  b.Node("HardSwish", "act", {"x"}, "a");
  b.Node("Flatten", "flatten", {"a"}, "f");
  b.Weight("w", {3, 32}, Iota(96));
  test_support::SetInt(b.Node("Gemm", "fc", {"f", "w"}, "y"), "transB", 1);
  b.Output("y");
  const LoadedModel m = ImportOnnxBytes(b.Bytes(), "hs.onnx");
  ASSERT_EQ(m.spec.layer_size(), 3);
  EXPECT_TRUE(m.spec.layer(0).has_hard_swish());
}

// x * Sigmoid(y) with y not x is no SiLU: it stays a sigmoid layer and a
// mul layer (a gate, as in squeeze-and-excitation), not misread.
TEST(OnnxLayerPatterns, AMulThatIsNoGatedActivationIsAMulLayer) {
  OnnxBuilder b({2, 4, 4});
  b.Weight("w", {2, 2, 1, 1}, Iota(4));
  b.Node("Conv", "conv", {"x", "w"}, "c");
  b.Node("Sigmoid", "gate", {"c"}, "s");
  b.Node("Mul", "mul", {"x", "s"}, "m");
  test_support::SetInt(b.Node("Flatten", "flat", {"m"}, "y"), "axis", 1);
  b.Output("y");
  const LoadedModel m = ImportOnnxBytes(b.Bytes(), "gate.onnx");
  ASSERT_EQ(m.spec.layer_size(), 4);
  EXPECT_TRUE(m.spec.layer(1).has_sigmoid());
  EXPECT_TRUE(m.spec.layer(2).has_mul());
}

}  // namespace
}  // namespace mt
