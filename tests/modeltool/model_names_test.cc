// What a model is called outside mt survives import and export: the input
// and output names of a PyTorch file, the class names of the data it was
// trained on, the run's summary; and a preset is fitted to the dataset's
// classes while a model with weights is warned about.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>

#include "core/model/model_spec.h"
#include "model_io/onnx_export.h"
#include "model_io/onnx_import.h"
#include "model_io/run_model.h"
#include "tests/modeltool/model_io_fixtures.h"
#include "tests/support/onnx_tools.h"

namespace mt {
namespace {

using test_support::RandomWeights;

onnx::ModelProto Parse(const std::string& bytes) {
  onnx::ModelProto m;
  EXPECT_TRUE(m.ParseFromString(bytes));
  return m;
}

std::map<std::string, std::string> Metadata(const onnx::ModelProto& m) {
  std::map<std::string, std::string> meta;
  for (const auto& p : m.metadata_props()) meta[p.key()] = p.value();
  return meta;
}

TEST(ModelNames, InputOutputAndClassNamesSurviveExportAndImport) {
  proto::ModelSpec spec = LoadModelSpec("lenet5");
  spec.set_input_name("x");
  spec.set_output_name("logits");
  const std::vector<std::string> classes = {"t-shirt", "trouser", "pullover", "dress", "coat",
                                            "sandal",  "shirt",   "sneaker",  "bag",   "boot"};
  for (const auto& c : classes) spec.add_class_names(c);
  const ModelWeights w = RandomWeights(spec, 3);
  const onnx::ModelProto m =
      Parse(ExportOnnxBytes(spec, w, {{"mt.training", R"({"test_accuracy":0.9})"}}));
  EXPECT_EQ(m.graph().input(0).name(), "x");
  EXPECT_EQ(m.graph().output(0).name(), "logits");
  const auto meta = Metadata(m);
  EXPECT_EQ(nlohmann::json::parse(meta.at("mt.class_names")), nlohmann::json(classes));
  EXPECT_EQ(meta.at("mt.training"), R"({"test_accuracy":0.9})");
  const LoadedModel back = ImportOnnxBytes(m.SerializeAsString(), "again.onnx");
  EXPECT_EQ(back.spec.input_name(), "x");
  EXPECT_EQ(back.spec.output_name(), "logits");
  EXPECT_EQ(
      std::vector<std::string>(back.spec.class_names().begin(), back.spec.class_names().end()),
      classes);
  EXPECT_EQ(back.weights->params, w.params);
  // And again: the same file, no Identity piled on Identity.
  EXPECT_EQ(Parse(ExportOnnxBytes(back.spec, *back.weights)).graph().node_size(),
            m.graph().node_size());
}

TEST(ModelNames, APyTorchFilesNamesAreItsOwnAfterTraining) {
  const LoadedModel m =
      ImportOnnx(test_support::OnnxTestDir() + "/fixtures/small_residual_opset17.onnx");
  EXPECT_EQ(m.spec.input_name(), "");  // "input" is the default
  EXPECT_EQ(m.spec.output_name(), "logits");
  const onnx::ModelProto out = Parse(ExportOnnxBytes(m.spec, *m.weights));
  EXPECT_EQ(out.graph().input(0).name(), "input");
  EXPECT_EQ(out.graph().output(0).name(), "logits");
  EXPECT_EQ(Metadata(out).count("mt.class_names"), 0u);
}

TEST(ModelNames, APresetGetsOneOutputPerClassAModelWithWeightsAWarning) {
  RunModel preset = LoadRunModel("lenet5", {});
  const std::string note = FitOutputsToClasses(preset, 3, {"cat", "dog", "fish"});
  EXPECT_THAT(note, ::testing::HasSubstr("3 outputs"));
  EXPECT_EQ(preset.spec.layer(preset.spec.layer_size() - 1).dense().units(), 3);
  EXPECT_EQ(preset.spec.class_names_size(), 3);
  EXPECT_TRUE(preset.warnings.empty());
  RunModel same = LoadRunModel("lenet5", {});
  EXPECT_EQ(FitOutputsToClasses(same, 10, {}), "");
  EXPECT_EQ(same.spec.class_names_size(), 0);

  const std::string dir = ::testing::TempDir() + "/model-names-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  const proto::ModelSpec lenet = LoadModelSpec("lenet5");
  ExportOnnx(lenet, RandomWeights(lenet, 1), dir + "/mine.onnx");
  RunModel trained = LoadRunModel(dir + "/mine.onnx", {});
  EXPECT_EQ(FitOutputsToClasses(trained, 3, {"a", "b", "c"}), "");
  EXPECT_EQ(trained.spec.layer(trained.spec.layer_size() - 1).dense().units(), 10);
  ASSERT_EQ(trained.warnings.size(), 1u);
  EXPECT_THAT(trained.warnings[0], ::testing::HasSubstr("10 outputs but the dataset 3 classes"));
  EXPECT_EQ(trained.spec.class_names_size(), 0);  // 3 names cannot name 10 outputs
  std::filesystem::remove_all(dir);
}

TEST(ModelNames, AnInputScalingOtherThanMtsTravelsThroughTheFile) {
  proto::ModelSpec spec = LoadModelSpec("mentee");
  for (float v : {0.485f, 0.456f, 0.406f}) spec.add_input_mean(v);
  for (float v : {0.229f, 0.224f, 0.225f}) spec.add_input_std(v);
  const onnx::ModelProto m = Parse(ExportOnnxBytes(spec, RandomWeights(spec, 2)));
  EXPECT_EQ(Metadata(m).at("mt.input_mean"), "[0.485,0.456,0.406]");
  const LoadedModel back = ImportOnnxBytes(m.SerializeAsString(), "imagenet.onnx");
  EXPECT_EQ(back.spec.input_mean_size(), 3);
  EXPECT_FLOAT_EQ(back.spec.input_std(2), 0.225f);
  // Pixel 255 in the blue channel: (1 - 0.406) / 0.225.
  const PixelScaling s = SpecPixelScaling(back.spec);
  EXPECT_NEAR(255 * s.scale[2] + s.offset[2], (1 - 0.406) / 0.225, 1e-5);
  // mt's own default comes back as no setting at all.
  const proto::ModelSpec plain = LoadModelSpec("mentee");
  const LoadedModel again =
      ImportOnnxBytes(ExportOnnxBytes(plain, RandomWeights(plain, 2)), "plain.onnx");
  EXPECT_EQ(again.spec.input_mean_size(), 0);
  EXPECT_TRUE(again.warnings.empty());
}

}  // namespace
}  // namespace mt
