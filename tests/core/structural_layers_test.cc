// The layers of issue 29's structural ops beyond the registry test's one
// example each: mul of same-shaped inputs, concat of flat inputs, average
// pooling that counts its padding, and the shapes each refuses.
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include "core/data/dataset.h"
#include "core/layers/layer_registry.h"
#include "core/model/model_spec.h"
#include "core/train/batch_buffer.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/support/gradient_check.h"
#include "tests/support/synthetic_dataset.h"
#include "tests/support/test_backends.h"

namespace mt {
namespace {

using test_support::CheckLayerGradientsOnInputs;
using test_support::RandomVector;

std::unique_ptr<Layer> Make(const std::string& text) {
  proto::Layer l;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &l)) << text;
  return MakeLayer(l);
}

TEST(StructuralLayers, MulOfOneShapeHasBothGradients) {
  kernels::CpuBackend cpu(2);
  auto mul = Make("mul {}");
  CheckLayerGradientsOnInputs(*mul, {Shape{3, 4, 5}, Shape{3, 4, 5}}, 2, cpu,
                              RandomVector(2 * 2 * 60, 3, -2, 2));
}

TEST(StructuralLayers, ConcatOfFlatFeatures) {
  kernels::CpuBackend cpu(1);
  auto concat = Make("concat {}");
  EXPECT_EQ(concat->SetupInputs({Shape{3}, Shape{5}, Shape{2}}), Shape{10});
  CheckLayerGradientsOnInputs(*concat, {Shape{3}, Shape{5}, Shape{2}}, 3, cpu,
                              RandomVector(3 * 10, 4));
}

TEST(StructuralLayers, AvgPoolCountingItsPadding) {
  kernels::CpuBackend cpu(1);
  auto pool = Make("avgpool { size: 3 stride: 2 padding: 1 count_include_pad: true }");
  EXPECT_EQ(pool->Setup(Shape{2, 5, 6}), (Shape{2, 3, 3}));
  EXPECT_TRUE(pool->Ops().Has(kernels::Op::kPaddedPool));
  CheckLayerGradientsOnInputs(*pool, {Shape{2, 5, 6}}, 2, cpu, RandomVector(2 * 60, 5));
  // Unpadded pooling asks for no padded-pool op, so OpenCL keeps it.
  EXPECT_FALSE(Make("maxpool { size: 2 }")->Ops().Has(kernels::Op::kPaddedPool));
}

TEST(StructuralLayers, RefuseWhatTheyCannotTake) {
  EXPECT_THROW(Make("maxpool { size: 3 padding: 2 }"), std::invalid_argument);
  EXPECT_THROW(Make("avgpool { size: 2 padding: -1 }"), std::invalid_argument);
  auto mul = Make("mul {}");
  EXPECT_THROW(mul->SetupInputs({Shape{3, 4, 4}, Shape{4}}), std::invalid_argument);
  EXPECT_THROW(mul->SetupInputs({Shape{3, 4, 4}, Shape{3, 2, 2}}), std::invalid_argument);
  EXPECT_EQ(mul->SetupInputs({Shape{3, 4, 4}, Shape{3}}), (Shape{3, 4, 4}));
  EXPECT_FALSE(mul->TakesInputs(3));
  auto concat = Make("concat {}");
  EXPECT_THROW(concat->SetupInputs({Shape{3, 4, 4}, Shape{2, 4, 5}}), std::invalid_argument);
  EXPECT_THROW(concat->SetupInputs({Shape{3, 4, 4}, Shape{2}}), std::invalid_argument);
  EXPECT_EQ(concat->SetupInputs({Shape{3, 4, 4}, Shape{2, 4, 4}}), (Shape{5, 4, 4}));
}

// A Fire and an SE block in one graph, ReLUs in place where they may be:
// the model's gradients (values read twice, a gate read by a mul) against
// central differences, on the CPU and with every layer asked onto OpenCL
// (which leaves mul, concat and the padded pools on the CPU).
constexpr const char* kFireAndSe = R"(
name: "fire_se"
input { channels: 2 height: 6 width: 6 }
layer { name: "pool" maxpool { size: 3 stride: 1 padding: 1 } }
layer { name: "e1" conv { filters: 2 kernel: 1 } }
layer { name: "r1" relu {} }
layer { name: "e3" conv { filters: 3 kernel: 3 padding: 1 } inputs: "pool" }
layer { name: "r3" relu {} }
layer { name: "fire" concat {} inputs: "r1" inputs: "r3" }
layer { name: "squeeze" global_avgpool {} }
layer { name: "excite" dense { units: 5 } }
layer { name: "gate" relu {} }
layer { name: "scaled" mul {} inputs: "fire" inputs: "gate" }
layer { name: "smooth" avgpool { size: 3 stride: 2 padding: 1 count_include_pad: true } }
layer { name: "flat" flatten {} }
layer { name: "fc" dense { units: 3 } }
)";

class FireAndSe : public ::testing::TestWithParam<std::string> {};

TEST_P(FireAndSe, ModelGradientsMatchCentralDifferences) {
  auto cpu = test_support::MakeTestBackend("cpu2");
  auto device = test_support::MakeTestBackend(GetParam());
  if (!device) GTEST_SKIP() << test_support::kNoOpenCl;
  const proto::ModelSpec spec = ParseModelSpec(kFireAndSe, "test");
  auto model =
      BuildModel(spec, *cpu, std::vector<kernels::Backend*>(spec.layer_size(), device.get()));
  const int n = 3;
  model->InitParams(7);
  model->Reserve(n);
  test_support::SyntheticDataset data(n, model->input_shape(), model->num_classes(), 5);
  std::vector<uint32_t> idx = {0, 1, 2};
  BatchBuffer batch(data.SampleShape(), n);
  batch.Fill(data, idx.data(), n);
  model->SetBatch(batch.images(), batch.labels(), n);
  std::vector<float> params(model->ParamCount()), grads(model->ParamCount());
  model->GetParams(params.data());
  model->ComputeGradients(1);
  model->GetGrads(grads.data());
  test_support::CheckOptions o;
  o.eps = 1e-3f;
  o.rel_tol = 2e-2;
  o.kink_abs = 5e-3;
  o.kink_rel = 5e-2;
  o.max_mismatch_fraction = 0.05;
  test_support::CompareDerivatives(
      "fire_se", params, grads, [&](const std::vector<float>& v) { model->SetParams(v.data()); },
      [&]() { return model->Evaluate(nullptr) / n; }, o, 300);
}

INSTANTIATE_TEST_SUITE_P(Backends, FireAndSe, ::testing::Values("cpu1", "opencl"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace mt
