// What mt cannot import is a clear OnnxError naming the node and the op,
// never a model computing garbage: truncated or corrupt files, unsupported
// ops and attributes, weights that do not fit, inputs of the wrong rank.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/model/model_spec.h"
#include "model_io/onnx_export.h"
#include "model_io/onnx_import.h"
#include "tests/modeltool/model_io_fixtures.h"

namespace mt {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

// lenet5 exported, for damaging.
onnx::ModelProto LeNet() {
  const proto::ModelSpec spec = LoadModelSpec("lenet5");
  onnx::ModelProto m;
  EXPECT_TRUE(m.ParseFromString(ExportOnnxBytes(spec, test_support::RandomWeights(spec, 3))));
  return m;
}

std::string ImportError(const std::string& bytes) {
  try {
    ImportOnnxBytes(bytes, "bad.onnx");
  } catch (const OnnxError& e) {
    return e.what();
  }
  ADD_FAILURE() << "imported";
  return "";
}

std::string ImportError(const onnx::ModelProto& m) { return ImportError(m.SerializeAsString()); }

onnx::NodeProto& NodeNamed(onnx::ModelProto& m, const std::string& name) {
  for (auto& n : *m.mutable_graph()->mutable_node())
    if (n.name() == name) return n;
  throw std::runtime_error("no node " + name);
}

onnx::AttributeProto& Attr(onnx::NodeProto& n, const std::string& name) {
  for (auto& a : *n.mutable_attribute())
    if (a.name() == name) return a;
  auto& a = *n.add_attribute();
  a.set_name(name);
  return a;
}

TEST(OnnxErrors, TruncatedOrCorruptFiles) {
  const std::string bytes = LeNet().SerializeAsString();
  for (size_t cut : {size_t{0}, size_t{7}, bytes.size() / 3, bytes.size() / 2, bytes.size() - 3})
    EXPECT_THAT(ImportError(bytes.substr(0, cut)), HasSubstr("bad.onnx")) << "cut at " << cut;
  EXPECT_THAT(ImportError("this is not protobuf at all"), HasSubstr("not an ONNX model"));
}

TEST(OnnxErrors, MissingFileNamesIt) {
  EXPECT_THROW(ImportOnnx("/nonexistent/model.onnx"), OnnxError);
}

TEST(OnnxErrors, UnsupportedOpNamesTheNodeAndTheSupportedOps) {
  onnx::ModelProto m = LeNet();
  auto& g = *m.mutable_graph();
  const std::string logits = g.output(0).name();
  auto& softmax = *g.add_node();
  softmax.set_op_type("Softmax");
  softmax.set_name("probabilities");
  softmax.add_input(logits);
  softmax.add_output("probs");
  g.mutable_output(0)->set_name("probs");
  EXPECT_THAT(ImportError(m),
              AllOf(HasSubstr("bad.onnx"), HasSubstr("Softmax node 'probabilities'"),
                    HasSubstr("not supported"), HasSubstr("Conv"),
                    HasSubstr("BatchNormalization")));
  // A final torch.softmax, the PyTorch habit, is named with its fix.
  EXPECT_THAT(ImportError(m), AllOf(HasSubstr("torch.softmax"), HasSubstr("return the logits")));
}

// x * 0.5 * (1 + erf(x / sqrt(2))), as torch 1.13 exports nn.GELU(): named
// as GELU with a replacement, not only as its Div and Erf.
TEST(OnnxErrors, GeluIsNamedWithAReplacement) {
  test_support::OnnxBuilder b({1, 2, 2});
  b.Weight("sqrt2", {}, {1.4142135f});
  b.Weight("one", {}, {1.0f});
  b.Weight("half", {}, {0.5f});
  b.Node("Flatten", "f", {"x"}, "fx");
  b.Node("Div", "/act/Div", {"fx", "sqrt2"}, "d");
  b.Node("Erf", "/act/Erf", {"d"}, "e");
  b.Node("Add", "/act/Add", {"e", "one"}, "a");
  b.Node("Mul", "/act/Mul", {"fx", "a"}, "m");
  b.Node("Mul", "/act/Mul_1", {"m", "half"}, "y");
  b.Output("y");
  EXPECT_THAT(ImportError(b.Bytes()),
              AllOf(HasSubstr("Div node '/act/Div'"), HasSubstr("Erf node '/act/Erf'"),
                    HasSubstr("nn.GELU"), HasSubstr("nn.SiLU")));
}

// Batch norm exported in training mode, as torch.onnx.export writes it
// without model.eval(): opset 14's training_mode 1 with the running mean
// and variance as outputs, or (before opset 14) the extra outputs alone.
TEST(OnnxErrors, ATrainModeExportIsRefusedNamingModelEval) {
  const proto::ModelSpec spec = ParseModelSpec(test_support::kResidualSpec, "residual");
  for (bool attribute : {true, false}) {
    onnx::ModelProto m;
    ASSERT_TRUE(m.ParseFromString(ExportOnnxBytes(spec, test_support::RandomWeights(spec, 3))));
    onnx::NodeProto& bn = NodeNamed(m, "bn1");
    bn.add_output("bn1.running_mean_out");
    bn.add_output("bn1.running_var_out");
    if (attribute) test_support::SetInt(bn, "training_mode", 1);
    EXPECT_THAT(ImportError(m), AllOf(HasSubstr("BatchNormalization node 'bn1'"),
                                      HasSubstr("training mode"), HasSubstr("model.eval()")))
        << attribute;
  }
}

TEST(OnnxErrors, UnsupportedOpInTheMiddle) {
  onnx::ModelProto m = LeNet();
  NodeNamed(m, "relu1").set_op_type("Softplus");
  EXPECT_THAT(ImportError(m), HasSubstr("Softplus node 'relu1'"));
}

// All of them in one message, not just the first; and the supported list
// holds what imports as layers, not the shape plumbing.
TEST(OnnxErrors, EveryUnsupportedNodeIsListedAtOnce) {
  onnx::ModelProto m = LeNet();
  NodeNamed(m, "relu1").set_op_type("Softplus");
  NodeNamed(m, "relu2").set_op_type("Erf");
  const std::string error = ImportError(m);
  EXPECT_THAT(error, AllOf(HasSubstr("2 nodes"), HasSubstr("Softplus node 'relu1'"),
                           HasSubstr("Erf node 'relu2'"), HasSubstr("Sigmoid"),
                           HasSubstr("HardSigmoid"), HasSubstr("LeakyRelu")));
  EXPECT_THAT(error, AllOf(Not(HasSubstr("Unsqueeze")), Not(HasSubstr("Gather"))));
}

TEST(OnnxErrors, WeightShapeMismatch) {
  onnx::ModelProto m = LeNet();
  // fc1 reads 400 features; give it weights for 399.
  for (auto& t : *m.mutable_graph()->mutable_initializer()) {
    if (t.name() != "fc1.weight") continue;
    t.set_dims(1, 399);
    t.mutable_raw_data()->resize(120 * 399 * 4);
  }
  EXPECT_THAT(ImportError(m), AllOf(HasSubstr("Gemm node 'fc1'"), HasSubstr("do not fit")));
}

TEST(OnnxErrors, ConvWeightForOtherInputChannels) {
  onnx::ModelProto m = LeNet();
  for (auto& t : *m.mutable_graph()->mutable_initializer()) {
    if (t.name() != "conv2.weight") continue;  // [16, 6, 5, 5] -> [16, 5, 5, 5]
    t.set_dims(1, 5);
    t.mutable_raw_data()->resize(16 * 5 * 5 * 5 * 4);
  }
  EXPECT_THAT(ImportError(m), AllOf(HasSubstr("Conv node 'conv2'"), HasSubstr("6x14x14")));
}

TEST(OnnxErrors, RawDataThatDoesNotMatchItsDims) {
  onnx::ModelProto m = LeNet();
  m.mutable_graph()->mutable_initializer(0)->mutable_raw_data()->resize(10);
  EXPECT_THAT(ImportError(m), HasSubstr("corrupt"));
}

TEST(OnnxErrors, MissingInitializer) {
  onnx::ModelProto m = LeNet();
  auto* inits = m.mutable_graph()->mutable_initializer();
  for (int i = 0; i < inits->size(); ++i)
    if (inits->Get(i).name() == "conv2.bias") inits->DeleteSubrange(i, 1);
  EXPECT_THAT(ImportError(m),
              AllOf(HasSubstr("Conv node 'conv2'"), HasSubstr("conv2.bias"), HasSubstr("missing")));
}

TEST(OnnxErrors, NonFloatWeights) {
  onnx::ModelProto m = LeNet();
  for (auto& t : *m.mutable_graph()->mutable_initializer()) {
    if (t.name() != "conv1.weight") continue;
    t.set_data_type(onnx::TensorProto::FLOAT16);
  }
  EXPECT_THAT(ImportError(m), AllOf(HasSubstr("conv1.weight"), HasSubstr("FLOAT16")));
}

TEST(OnnxErrors, WrongInputRank) {
  onnx::ModelProto m = LeNet();
  m.mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim()
      ->RemoveLast();
  EXPECT_THAT(ImportError(m), AllOf(HasSubstr("rank 3"), HasSubstr("[N, C, H, W]")));
}

TEST(OnnxErrors, UnsupportedAttributes) {
  {
    onnx::ModelProto m = LeNet();
    auto& d = Attr(NodeNamed(m, "conv1"), "dilations");
    d.clear_ints();
    d.add_ints(2);
    d.add_ints(2);
    EXPECT_THAT(ImportError(m), AllOf(HasSubstr("Conv node 'conv1'"), HasSubstr("dilations")));
  }
  {
    onnx::ModelProto m = LeNet();
    auto& p = Attr(NodeNamed(m, "conv1"), "pads");
    p.set_ints(2, 1);  // [2, 2, 1, 2]
    EXPECT_THAT(ImportError(m), AllOf(HasSubstr("conv1"), HasSubstr("[2, 2, 1, 2]")));
  }
  {
    onnx::ModelProto m = LeNet();
    auto& n = NodeNamed(m, "conv2");
    test_support::SetString(n, "auto_pad", "SAME_UPPER");
    EXPECT_THAT(ImportError(m), AllOf(HasSubstr("conv2"), HasSubstr("SAME_UPPER")));
  }
  {
    onnx::ModelProto m = LeNet();
    test_support::SetInt(NodeNamed(m, "pool1"), "ceil_mode", 1);
    EXPECT_THAT(ImportError(m), AllOf(HasSubstr("MaxPool node 'pool1'"), HasSubstr("ceil_mode")));
  }
  {
    onnx::ModelProto m = LeNet();
    test_support::SetInt(NodeNamed(m, "fc1"), "transA", 1);
    EXPECT_THAT(ImportError(m), HasSubstr("transA"));
  }
  {
    onnx::ModelProto m = LeNet();
    test_support::SetInt(NodeNamed(m, "relu1"), "mystery", 1);
    EXPECT_THAT(ImportError(m), HasSubstr("attribute 'mystery' is not supported"));
  }
}

TEST(OnnxErrors, OpsetOutOfRange) {
  onnx::ModelProto m = LeNet();
  m.mutable_opset_import(0)->set_version(9);
  EXPECT_THAT(ImportError(m), HasSubstr("opset 9 is not supported"));
}

TEST(OnnxErrors, ClipOtherThanReluOrRelu6) {
  test_support::OnnxBuilder b({1, 2, 2});
  b.Weight("lo", {}, {-1.0f});
  b.Weight("hi", {}, {1.0f});
  b.Node("Flatten", "f", {"x"}, "fx");
  b.Node("Clip", "hardtanh", {"fx", "lo", "hi"}, "y");
  b.Output("y");
  EXPECT_THAT(ImportError(b.Bytes()), AllOf(HasSubstr("Clip node 'hardtanh'"), HasSubstr("ReLU6")));
}

TEST(OnnxErrors, AConstantAddedWhereNoBiasIsMissing) {
  test_support::OnnxBuilder b({1, 2, 2});
  b.Weight("c", {4}, {1, 2, 3, 4});
  b.Node("Flatten", "f", {"x"}, "fx");
  b.Node("Add", "shift", {"fx", "c"}, "y");
  b.Output("y");
  EXPECT_THAT(ImportError(b.Bytes()), AllOf(HasSubstr("Add node 'shift'"), HasSubstr("bias")));
}

TEST(OnnxErrors, OutputNotTheLastLayer) {
  test_support::OnnxBuilder b({1, 2, 2});
  b.Node("Flatten", "f", {"x"}, "fx");
  b.Node("Relu", "r", {"fx"}, "y");
  b.Node("Relu", "dangling", {"fx"}, "z");
  b.Output("y");
  EXPECT_THAT(ImportError(b.Bytes()), HasSubstr("last layer"));
}

}  // namespace
}  // namespace mt
