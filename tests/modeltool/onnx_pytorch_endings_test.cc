// Common PyTorch constructs mt cannot train are refused naming the
// construct and the fix, not only the ONNX ops they became: a final
// torch.softmax, nn.GELU (Div, Erf, Add, Mul) and a train-mode export
// (batch norm writing its running statistics). Graphs as torch.onnx.export
// writes them, built by hand on an mt export.
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

onnx::ModelProto Exported(const proto::ModelSpec& spec) {
  onnx::ModelProto m;
  EXPECT_TRUE(m.ParseFromString(ExportOnnxBytes(spec, test_support::RandomWeights(spec, 3))));
  return m;
}

std::string ImportError(const onnx::ModelProto& m) {
  try {
    ImportOnnxBytes(m.SerializeAsString(), "torch.onnx");
  } catch (const OnnxError& e) {
    return e.what();
  }
  return "imported";
}

onnx::NodeProto& AddNode(onnx::GraphProto& g, const std::string& op, const std::string& name,
                         const std::vector<std::string>& in, const std::string& out) {
  onnx::NodeProto& n = *g.add_node();
  n.set_op_type(op);
  n.set_name(name);
  for (const std::string& i : in) n.add_input(i);
  n.add_output(out);
  return n;
}

void AddScalar(onnx::GraphProto& g, const std::string& name, float v) {
  onnx::TensorProto& t = *g.add_initializer();
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_float_data(v);
}

TEST(OnnxPyTorchEndings, AFinalSoftmaxIsRefusedNamingTorchSoftmaxAndTheFix) {
  onnx::ModelProto m = Exported(LoadModelSpec("lenet5"));
  auto& g = *m.mutable_graph();
  AddNode(g, "Softmax", "/Softmax", {g.output(0).name()}, "probabilities");
  g.mutable_output(0)->set_name("probabilities");
  EXPECT_THAT(ImportError(m), AllOf(HasSubstr("Softmax node '/Softmax'"),
                                    HasSubstr("torch.softmax"), HasSubstr("return the logits")));
}

// x * 0.5 * (1 + erf(x / sqrt(2))), as torch 1.13 exports nn.GELU() in
// place of lenet5's first ReLU.
TEST(OnnxPyTorchEndings, GeluIsNamedWithAReplacement) {
  onnx::ModelProto m = Exported(LoadModelSpec("lenet5"));
  auto& g = *m.mutable_graph();
  for (auto& n : *g.mutable_node()) {
    if (n.name() != "relu1") continue;
    const std::string x = n.input(0), y = n.output(0);
    n.set_op_type("Div");
    n.set_name("/act/Div");
    n.add_input("sqrt2");
    n.set_output(0, "/act/Div_output_0");
    AddScalar(g, "sqrt2", 1.4142135f);
    AddScalar(g, "one", 1);
    AddScalar(g, "half", 0.5f);
    AddNode(g, "Erf", "/act/Erf", {"/act/Div_output_0"}, "/act/Erf_output_0");
    AddNode(g, "Add", "/act/Add", {"/act/Erf_output_0", "one"}, "/act/Add_output_0");
    AddNode(g, "Mul", "/act/Mul", {x, "/act/Add_output_0"}, "/act/Mul_output_0");
    AddNode(g, "Mul", "/act/Mul_1", {"/act/Mul_output_0", "half"}, y);
    break;
  }
  EXPECT_THAT(ImportError(m),
              AllOf(HasSubstr("Div node '/act/Div'"), HasSubstr("Erf node '/act/Erf'"),
                    HasSubstr("nn.GELU"), HasSubstr("nn.SiLU")));
}

// Batch norm exported in training mode: opset 14's training_mode 1 with
// the running mean and variance as outputs, or (before opset 14) the
// extra outputs alone.
TEST(OnnxPyTorchEndings, ATrainModeExportIsRefusedNamingModelEval) {
  const proto::ModelSpec spec = ParseModelSpec(test_support::kResidualSpec, "residual");
  for (bool attribute : {true, false}) {
    onnx::ModelProto m = Exported(spec);
    for (auto& n : *m.mutable_graph()->mutable_node()) {
      if (n.op_type() != "BatchNormalization" || n.name() != "bn1") continue;
      n.add_output("bn1.running_mean_out");
      n.add_output("bn1.running_var_out");
      if (attribute) test_support::SetInt(n, "training_mode", 1);
    }
    EXPECT_THAT(ImportError(m), AllOf(HasSubstr("BatchNormalization node 'bn1'"),
                                      HasSubstr("training mode"), HasSubstr("model.eval()")))
        << attribute;
  }
}

}  // namespace
}  // namespace mt
