// Export then import gives back the same spec and the same weights, bit for
// bit; PyTorch-style graphs (MatMul + Add, Gemm without transB, Reshape,
// Clip from Constant nodes, BN folded into conv biases) import as the
// layers they compute.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <string>

#include "core/data/dataset.h"
#include "core/model/model_spec.h"
#include "core/model/presets.h"
#include "model_io/onnx_export.h"
#include "model_io/onnx_import.h"
#include "tests/modeltool/model_io_fixtures.h"

namespace mt {
namespace {

using test_support::Iota;
using test_support::OnnxBuilder;
using test_support::RandomWeights;

void ExpectRoundTrip(const std::string& spec_text, const std::string& origin) {
  const proto::ModelSpec spec = ParseModelSpec(spec_text, origin);
  const ModelWeights weights = RandomWeights(spec, 7);
  const std::string bytes = ExportOnnxBytes(spec, weights);
  const LoadedModel back = ImportOnnxBytes(bytes, origin + ".onnx");
  EXPECT_EQ(ModelSpecToText(back.spec), ModelSpecToText(spec));
  ASSERT_TRUE(back.weights.has_value());
  EXPECT_EQ(back.weights->params, weights.params);
  EXPECT_EQ(back.weights->running_stats, weights.running_stats);
  // And again: ONNX to ONNX is byte for byte.
  EXPECT_EQ(ExportOnnxBytes(back.spec, *back.weights), bytes);
}

TEST(OnnxRoundTrip, ConvBatchNormRelu6AddGraph) {
  ExpectRoundTrip(test_support::kResidualSpec, "residual");
}

TEST(OnnxRoundTrip, DenseChain) { ExpectRoundTrip(test_support::kDenseChainSpec, "dense_chain"); }

TEST(OnnxRoundTrip, ThreeWaySum) { ExpectRoundTrip(test_support::kThreeWaySumSpec, "three_way"); }

TEST(OnnxRoundTrip, Presets) {
  for (const std::string& name : PresetNames()) ExpectRoundTrip(PresetSpecText(name), name);
}

TEST(OnnxRoundTrip, ExportSaysHowToScaleItsInput) {
  const proto::ModelSpec spec = LoadModelSpec("lenet5");
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(ExportOnnxBytes(spec, RandomWeights(spec, 1))));
  std::map<std::string, std::string> meta;
  for (const auto& p : m.metadata_props()) meta[p.key()] = p.value();
  EXPECT_EQ(meta["mt.input_layout"], "NCHW");
  // What training fed it: pixel 0 as -1, pixel 255 as 1 (core/data/dataset.h).
  EXPECT_EQ(meta["mt.input_mean"], "[0.5]");  // JSON, as mt.class_names
  const double mean = nlohmann::json::parse(meta["mt.input_mean"])[0].get<double>(),
               std = nlohmann::json::parse(meta["mt.input_std"])[0].get<double>();
  EXPECT_NEAR((0.0 - mean) / std, kPixelOffset, 1e-6);
  EXPECT_NEAR((1.0 - mean) / std, 255 * kPixelScale + kPixelOffset, 1e-6);
  EXPECT_THAT(meta["mt.input_scaling"], ::testing::HasSubstr("(image - mean) / std"));
}

TEST(OnnxRoundTrip, ExportUsesOpset13WithASymbolicBatch) {
  const proto::ModelSpec spec = LoadModelSpec("lenet5");
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(ExportOnnxBytes(spec, RandomWeights(spec, 1))));
  EXPECT_EQ(m.ir_version(), 7);
  ASSERT_EQ(m.opset_import_size(), 1);
  EXPECT_EQ(m.opset_import(0).version(), 13);
  const auto& in = m.graph().input(0).type().tensor_type().shape();
  ASSERT_EQ(in.dim_size(), 4);
  EXPECT_EQ(in.dim(0).dim_param(), "N");
  EXPECT_EQ(in.dim(1).dim_value(), 1);
  const auto& out = m.graph().output(0).type().tensor_type().shape();
  ASSERT_EQ(out.dim_size(), 2);
  EXPECT_EQ(out.dim(1).dim_value(), 10);
  bool named = false;
  for (const auto& t : m.graph().initializer()) named = named || t.name() == "conv1.weight";
  EXPECT_TRUE(named);
}

// As torch.onnx.export writes a small CNN in eval mode with constant folding:
// batch norm folded into the conv's bias, ReLU6 as Clip with Constant
// bounds, GlobalAveragePool + Reshape, then MatMul + Add and a Gemm.
TEST(OnnxImport, PyTorchStyleGraph) {
  OnnxBuilder b({2, 6, 6});
  b.Weight("conv.weight", {4, 2, 3, 3}, Iota(72));
  b.Weight("conv.bias", {4}, {0.1f, 0.2f, 0.3f, 0.4f});
  auto& conv = b.Node("Conv", "/features/conv/Conv", {"x", "conv.weight", "conv.bias"}, "c");
  test_support::SetInts(conv, "kernel_shape", {3, 3});
  test_support::SetInts(conv, "pads", {1, 1, 1, 1});
  test_support::SetInts(conv, "strides", {1, 1});
  test_support::SetInts(conv, "dilations", {1, 1});
  test_support::SetInt(conv, "group", 1);
  auto& lo = b.Node("Constant", "lo", {}, "lo_v");
  {
    auto& a = *lo.add_attribute();
    a.set_name("value");
    a.set_type(onnx::AttributeProto::TENSOR);
    const float zero = 0;
    *a.mutable_t() = FloatTensor("", {}, &zero);
  }
  b.Weight("six", {}, {6.0f});
  b.Node("Clip", "/features/act/Clip", {"c", "lo_v", "six"}, "a");
  b.Node("GlobalAveragePool", "gap", {"a"}, "g");
  b.Ints("shape", {0, -1});
  b.Node("Reshape", "reshape", {"g", "shape"}, "flat");
  const std::vector<float> mm = Iota(4 * 3);  // [inputs 4][units 3]
  b.Weight("mm.weight", {4, 3}, mm);
  b.Node("MatMul", "hidden", {"flat", "mm.weight"}, "h");
  b.Weight("mm.bias", {3}, {1.0f, 2.0f, 3.0f});
  b.Node("Add", "hidden_bias", {"h", "mm.bias"}, "hb");
  b.Node("Identity", "same", {"hb"}, "hb2");
  b.Weight("head.weight", {3, 2}, Iota(6));  // transB = 0: [inputs][units]
  b.Weight("head.bias", {2}, {0.5f, -0.5f});
  b.Node("Gemm", "head", {"hb2", "head.weight", "head.bias"}, "logits");
  b.Output("logits");

  const LoadedModel m = ImportOnnxBytes(b.Bytes(), "pytorch.onnx");
  const auto& s = m.spec;
  ASSERT_EQ(s.layer_size(), 5);
  // The module's path, as PyTorch names its weights and --freeze takes it.
  EXPECT_EQ(s.layer(0).name(), "features.conv");  // "/features/conv/Conv"
  EXPECT_EQ(s.layer(1).name(), "features.act");
  EXPECT_EQ(s.layer(0).conv().padding(), 1);
  EXPECT_FALSE(s.layer(0).conv().no_bias());
  EXPECT_TRUE(s.layer(1).has_relu6());
  EXPECT_TRUE(s.layer(2).has_global_avgpool());
  EXPECT_EQ(s.layer(3).dense().units(), 3);
  EXPECT_EQ(s.layer(4).dense().units(), 2);
  const std::vector<float>& p = m.weights->params;
  ASSERT_EQ(p.size(), 72u + 4 + 4 * 3 + 3 + 3 * 2 + 2);
  const size_t dense1 = 76, dense2 = dense1 + 15;
  // Ours is [units][inputs]: MatMul's [inputs][units] transposed.
  for (int u = 0; u < 3; ++u)
    for (int i = 0; i < 4; ++i) EXPECT_EQ(p[dense1 + u * 4 + i], mm[i * 3 + u]);
  EXPECT_EQ(p[dense1 + 12], 1.0f);
  EXPECT_EQ(p[dense1 + 14], 3.0f);
  EXPECT_EQ(p[dense2 + 1 * 3 + 2], Iota(6)[2 * 2 + 1]);
  EXPECT_EQ(p[dense2 + 6], 0.5f);
}

TEST(OnnxImport, OldStyleClipAttributesAndInitializersAsInputs) {
  OnnxBuilder b({1, 2, 2}, 11);
  b.Weight("w", {2, 4}, Iota(8));
  b.g.add_input()->set_name("w");  // keep_initializers_as_inputs
  b.Node("Flatten", "f", {"x"}, "fx");
  b.Node("Clip", "relu", {"fx"}, "r");  // no bounds above: Clip(0, inf) needs a min
  b.Weight("zero", {}, {0.0f});
  b.g.mutable_node(1)->add_input("zero");
  auto& gemm = b.Node("Gemm", "fc", {"r", "w"}, "y");
  test_support::SetInt(gemm, "transB", 1);
  b.Output("y");
  const LoadedModel m = ImportOnnxBytes(b.Bytes(), "old.onnx");
  ASSERT_EQ(m.spec.layer_size(), 3);
  EXPECT_TRUE(m.spec.layer(1).has_relu());
  EXPECT_EQ(m.spec.layer(2).dense().units(), 2);
  // Gemm without C: a zero bias.
  EXPECT_EQ(m.weights->params[8], 0.0f);
}

}  // namespace
}  // namespace mt

namespace mt {
namespace {

// x.view(x.size(0), -1) with a dynamic batch, as torch.onnx.export writes
// it: Shape -> Gather -> Unsqueeze -> Concat -> Reshape.
TEST(OnnxImport, ViewWithTheBatchSizeFromShapeOps) {
  test_support::OnnxBuilder b({1, 3, 3});
  b.Weight("w", {2, 1, 3, 3}, test_support::Iota(18));
  b.Node("Conv", "/conv/Conv", {"x", "w"}, "c");
  b.Node("Shape", "/Shape", {"c"}, "s");
  auto& zero = *b.g.add_initializer();
  zero.set_name("zero");
  zero.set_data_type(onnx::TensorProto::INT64);
  zero.add_int64_data(0);  // a scalar
  b.Node("Gather", "/Gather", {"s", "zero"}, "n");
  b.Ints("axes", {0});
  b.Node("Unsqueeze", "/Unsqueeze", {"n", "axes"}, "n1");
  b.Ints("minus_one", {-1});
  test_support::SetInt(b.Node("Concat", "/Concat", {"n1", "minus_one"}, "shape"), "axis", 0);
  b.Node("Reshape", "/Reshape", {"c", "shape"}, "flat");
  b.Weight("fc.w", {3, 2}, test_support::Iota(6));
  auto& gemm = b.Node("Gemm", "/fc/Gemm", {"flat", "fc.w"}, "y");
  test_support::SetInt(gemm, "transB", 1);
  b.Output("y");
  const LoadedModel m = ImportOnnxBytes(b.Bytes(), "view.onnx");
  ASSERT_EQ(m.spec.layer_size(), 3);
  EXPECT_TRUE(m.spec.layer(0).conv().no_bias());
  EXPECT_TRUE(m.spec.layer(1).has_flatten());
  EXPECT_EQ(m.spec.layer(2).name(), "fc");
}

}  // namespace
}  // namespace mt
