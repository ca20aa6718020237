// The layers of issue 29's structural ops beyond the registry test's one
// example each: mul of same-shaped inputs, concat of flat inputs, average
// pooling that counts its padding, and the shapes each refuses.
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include "core/layers/layer_registry.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/support/gradient_check.h"

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

}  // namespace
}  // namespace mt
