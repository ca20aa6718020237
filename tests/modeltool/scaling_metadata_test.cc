// mt.input_mean and mt.input_std have one format, read the same wherever a
// model file is opened (model_io/input_scaling_metadata.h): a number or a
// JSON list, as mt.class_names is JSON; the comma list older exports wrote
// still reads. Anything else is refused naming the key and the value,
// never ignored: a model fed inputs scaled otherwise computes garbage.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/model/model_spec.h"
#include "model_io/input_scaling_metadata.h"
#include "model_io/onnx_export.h"
#include "model_io/onnx_import.h"
#include "tests/modeltool/model_io_fixtures.h"

namespace mt {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::FloatEq;
using ::testing::HasSubstr;

std::string Refusal(const std::string& value) {
  try {
    ParseScalingMetadata("m.onnx", "mt.input_mean", value);
  } catch (const OnnxError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(ScalingMetadata, ANumberAJsonListOrTheOldCommaListReads) {
  EXPECT_THAT(ParseScalingMetadata("m", "k", "0.5"), ElementsAre(FloatEq(0.5f)));
  EXPECT_THAT(ParseScalingMetadata("m", "k", "[0.485, 0.456, 0.406]"),
              ElementsAre(FloatEq(0.485f), FloatEq(0.456f), FloatEq(0.406f)));
  EXPECT_THAT(ParseScalingMetadata("m", "k", "[0.5]"), ElementsAre(FloatEq(0.5f)));
  EXPECT_THAT(ParseScalingMetadata("m", "k", "0.485000014,0.456,0.405999988"),
              ElementsAre(FloatEq(0.485f), FloatEq(0.456f), FloatEq(0.406f)));
}

TEST(ScalingMetadata, AnythingElseIsRefusedNamingTheKeyAndTheValue) {
  for (const std::string bad : {"0.485 0.456 0.406", "[]", "[\"a\"]", "x", "", "[1, 2, 3, 4]",
                                "nan", "0.5,", "{\"mean\": 0.5}", "1e999"})
    EXPECT_THAT(Refusal(bad), AllOf(HasSubstr("m.onnx"), HasSubstr("mt.input_mean '" + bad + "'"),
                                    HasSubstr("[0.485, 0.456, 0.406]")))
        << bad;
}

TEST(ScalingMetadata, WrittenAsTheShortestJsonListThatReadsBackExactly) {
  EXPECT_EQ(ScalingMetadataText({0.485f, 0.456f, 0.406f}), "[0.485,0.456,0.406]");
  EXPECT_EQ(ScalingMetadataText({0.5f}), "[0.5]");
  const std::vector<float> odd = {1.0f / 3, 0.1f + 0.2f, 1e-7f};
  EXPECT_EQ(ParseScalingMetadata("m", "k", ScalingMetadataText(odd)), odd);
}

// mentee (3 channels) exported, its metadata then set by hand as a user
// adds it to a PyTorch export.
std::string WithMetadata(const std::vector<std::pair<std::string, std::string>>& props) {
  const proto::ModelSpec spec = LoadModelSpec("mentee");
  onnx::ModelProto m;
  EXPECT_TRUE(m.ParseFromString(ExportOnnxBytes(spec, test_support::RandomWeights(spec, 2))));
  m.clear_metadata_props();
  for (const auto& [key, value] : props) {
    auto* p = m.add_metadata_props();
    p->set_key(key);
    p->set_value(value);
  }
  return m.SerializeAsString();
}

std::string ImportRefusal(const std::vector<std::pair<std::string, std::string>>& props) {
  try {
    ImportOnnxBytes(WithMetadata(props), "user.onnx");
  } catch (const OnnxError& e) {
    return e.what();
  }
  return "imported";
}

TEST(ScalingMetadata, TheImporterTakesTheJsonFormsAndRefusesTheRest) {
  const LoadedModel json = ImportOnnxBytes(
      WithMetadata({{"mt.input_mean", "[0.485, 0.456, 0.406]"}, {"mt.input_std", "0.25"}}),
      "user.onnx");
  EXPECT_THAT(json.spec.input_mean(),
              ElementsAre(FloatEq(0.485f), FloatEq(0.456f), FloatEq(0.406f)));
  EXPECT_THAT(json.spec.input_std(), ElementsAre(FloatEq(0.25f)));
  EXPECT_TRUE(json.warnings.empty());

  EXPECT_THAT(
      ImportRefusal({{"mt.input_mean", "0.485 0.456 0.406"}, {"mt.input_std", "[0.2, 0.2, 0.2]"}}),
      AllOf(HasSubstr("user.onnx"), HasSubstr("mt.input_mean '0.485 0.456 0.406'")));
  EXPECT_THAT(ImportRefusal({{"mt.input_mean", "[0.5, 0.5]"}, {"mt.input_std", "0.5"}}),
              AllOf(HasSubstr("mt.input_mean '[0.5, 0.5]'"), HasSubstr("3 input channel")));
  EXPECT_THAT(ImportRefusal({{"mt.input_mean", "0.5"}, {"mt.input_std", "0"}}),
              HasSubstr("mt.input_std '0'"));
  EXPECT_THAT(ImportRefusal({{"mt.input_mean", "0.4"}}),
              AllOf(HasSubstr("mt.input_mean '0.4'"), HasSubstr("without mt.input_std")));
  EXPECT_THAT(ImportRefusal({{"mt.class_names", "cat,dog"}}),
              AllOf(HasSubstr("mt.class_names 'cat,dog'"), HasSubstr("JSON list")));
}

}  // namespace
}  // namespace mt
