// The ONNX import of issue 29's structural ops on the PyTorch export of
// tests/onnx/make_mobile_fixtures.py (mobile_ops_relu): what each node
// becomes, and the variants mt refuses by name rather than misreading.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/model/model_spec.h"
#include "model_io/onnx_import.h"
#include "onnx/onnx_pb.h"

namespace mt {
namespace {

using ::testing::HasSubstr;

onnx::ModelProto Fixture() {
  std::ifstream f(std::filesystem::path(MT_SOURCE_DIR) / "tests/onnx/fixtures/mobile_ops_relu.onnx",
                  std::ios::binary);
  std::stringstream bytes;
  bytes << f.rdbuf();
  onnx::ModelProto m;
  EXPECT_TRUE(m.ParseFromString(bytes.str()));
  return m;
}

onnx::NodeProto& FirstOf(onnx::ModelProto& m, const std::string& op) {
  for (auto& n : *m.mutable_graph()->mutable_node())
    if (n.op_type() == op) return n;
  throw std::runtime_error("no " + op + " node");
}

onnx::AttributeProto& Attr(onnx::NodeProto& n, const std::string& name) {
  for (auto& a : *n.mutable_attribute())
    if (a.name() == name) return a;
  auto& a = *n.add_attribute();
  a.set_name(name);
  return a;
}

std::string ImportError(const onnx::ModelProto& m) {
  try {
    ImportOnnxBytes(m.SerializeAsString(), "m.onnx");
  } catch (const OnnxError& e) {
    return e.what();
  }
  ADD_FAILURE() << "imported";
  return "";
}

TEST(OnnxStructuralOps, PyTorchsNodesBecomeTheLayersThatComputeThem) {
  const LoadedModel m = ImportOnnxBytes(Fixture().SerializeAsString(), "m.onnx");
  const std::string text = ModelSpecToText(m.spec);
  // MaxPool pads; AvgPool2d(padding=1) as Pad + AveragePool counts the pad,
  // count_include_pad=False does not.
  EXPECT_THAT(text, HasSubstr("maxpool {\n    size: 3\n    stride: 2\n    padding: 1\n  }"));
  EXPECT_THAT(text, HasSubstr("avgpool {\n    size: 3\n    stride: 1\n    padding: 1\n"
                              "    count_include_pad: true\n  }"));
  EXPECT_THAT(text, HasSubstr("avgpool {\n    size: 3\n    stride: 2\n    padding: 1\n  }"));
  int concat = 0, mul = 0, pools = 0, dense = 0;
  for (const auto& l : m.spec.layer()) {
    concat += l.has_concat();
    mul += l.has_mul();
    pools += l.has_global_avgpool();  // ReduceMean keepdims 1 and 0
    dense += l.has_dense();           // the SE's two 1x1 convs, and the classifier
  }
  EXPECT_EQ(concat, 1);
  EXPECT_EQ(mul, 1);
  EXPECT_EQ(pools, 2);
  EXPECT_EQ(dense, 3);
}

TEST(OnnxStructuralOps, RefusesWhatItCannotComputeNamingIt) {
  onnx::ModelProto m = Fixture();
  Attr(FirstOf(m, "Concat"), "axis").set_i(2);
  EXPECT_THAT(ImportError(m), HasSubstr("only axis 1"));

  m = Fixture();
  Attr(FirstOf(m, "MaxPool"), "ceil_mode").set_i(1);
  EXPECT_THAT(ImportError(m), HasSubstr("ceil_mode 1"));

  m = Fixture();
  auto& axes = Attr(FirstOf(m, "ReduceMean"), "axes");
  axes.clear_ints();
  axes.add_ints(1);
  EXPECT_THAT(ImportError(m), HasSubstr("axes [2, 3]"));

  // A Mul by a weight: not a product of two computed tensors.
  m = Fixture();
  auto& mul = FirstOf(m, "Mul");
  mul.set_input(1, m.graph().initializer(0).name());
  EXPECT_THAT(ImportError(m), HasSubstr("constant"));

  // The Pad's zeros read by a MaxPool would be a wrong maximum.
  m = Fixture();
  FirstOf(m, "AveragePool").set_op_type("MaxPool");
  EXPECT_THAT(ImportError(m), HasSubstr("non-zero Pad"));
}

}  // namespace
}  // namespace mt
