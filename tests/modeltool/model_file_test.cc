// LoadModelFile / SaveModelFile by extension: checkpoints keep the running
// statistics, text specs drop the weights and say so, presets load as specs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "core/checkpoint/checkpoint.h"
#include "core/model/model_spec.h"
#include "model_io/model_file.h"
#include "model_io/onnx_error.h"
#include "model_io/run_model.h"
#include "tests/modeltool/model_io_fixtures.h"
#include "tests/support/files.h"

namespace mt {
namespace {

namespace fs = std::filesystem;

TEST(ModelFile, KindByExtension) {
  EXPECT_EQ(ModelFileKindOf("a/b.onnx"), ModelFileKind::kOnnx);
  EXPECT_EQ(ModelFileKindOf("ckpt-00000010.mtc"), ModelFileKind::kCheckpoint);
  EXPECT_EQ(ModelFileKindOf("model.pbtxt"), ModelFileKind::kTextSpec);
  EXPECT_EQ(ModelFileKindOf("lenet5"), ModelFileKind::kTextSpec);
}

TEST(ModelFile, EveryFormatRoundTrips) {
  const fs::path dir = test_support::FreshTempDir("model-file");
  const proto::ModelSpec spec = ParseModelSpec(test_support::kResidualSpec, "residual");
  const ModelWeights w = test_support::RandomWeights(spec, 11);
  for (const char* name : {"m.onnx", "m.mtc"}) {
    const std::string path = (dir / name).string();
    const SavedModel saved = SaveModelFile(path, spec, w);
    EXPECT_FALSE(saved.weights_dropped);
    const LoadedModel back = LoadModelFile(path);
    EXPECT_EQ(back.origin, path);
    EXPECT_EQ(ModelSpecToText(back.spec), ModelSpecToText(spec)) << name;
    ASSERT_TRUE(back.weights) << name;
    EXPECT_EQ(back.weights->params, w.params) << name;
    EXPECT_EQ(back.weights->running_stats, w.running_stats) << name;
  }
  // The checkpoint is at step 0, with no optimizer state.
  const Checkpoint c = LoadCheckpoint((dir / "m.mtc").string());
  EXPECT_EQ(c.step, 0);
  EXPECT_TRUE(c.optimizer.slots.empty());

  const std::string text = (dir / "m.pbtxt").string();
  EXPECT_TRUE(SaveModelFile(text, spec, w).weights_dropped);
  const LoadedModel spec_only = LoadModelFile(text);
  EXPECT_EQ(ModelSpecToText(spec_only.spec), ModelSpecToText(spec));
  EXPECT_FALSE(spec_only.weights);
  fs::remove_all(dir);
}

TEST(ModelFile, PresetLoadsWithoutWeights) {
  const LoadedModel m = LoadModelFile("lenet5");
  EXPECT_EQ(m.spec.name(), "lenet5");
  EXPECT_FALSE(m.weights);
}

TEST(ModelFile, CheckpointWithoutTheStatisticsItsModelNeedsIsRefused) {
  const fs::path dir = test_support::FreshTempDir("model-file-stats");
  const proto::ModelSpec spec = ParseModelSpec(test_support::kResidualSpec, "residual");
  Checkpoint c;
  c.model_spec = ModelSpecToText(spec);
  c.weights = test_support::RandomWeights(spec, 2).params;  // as an older mt wrote it
  const std::string path = (dir / "old.mtc").string();
  SaveCheckpoint(path, c);
  EXPECT_THROW(LoadModelFile(path), CheckpointError);
  fs::remove_all(dir);
}

TEST(ModelFile, WeightsOfAnotherModelAreRefused) {
  const fs::path dir = test_support::FreshTempDir("model-file-fit");
  const proto::ModelSpec spec = LoadModelSpec("lenet5");
  ModelWeights w = test_support::RandomWeights(spec, 2);
  w.params.pop_back();
  EXPECT_ANY_THROW(SaveModelFile((dir / "x.mtc").string(), spec, w));
  EXPECT_THROW(SaveModelFile((dir / "x.onnx").string(), spec, w), OnnxError);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mt

namespace mt {
namespace {

TEST(RunModelLabel, TheFinalModelIsNamedAfterTheFileOrThePreset) {
  const std::filesystem::path dir = test_support::FreshTempDir("run-model-label");
  const proto::ModelSpec spec = ParseModelSpec(test_support::kResidualSpec, "torch_jit");
  const std::string file = (dir / "my_net.onnx").string();
  SaveModelFile(file, spec, test_support::RandomWeights(spec, 3));
  // The graph calls itself torch_jit, as PyTorch names every export.
  EXPECT_EQ(LoadRunModel(file, {}).label, "my_net");
  EXPECT_EQ(LoadRunModel("lenet5", {}).label, "lenet5");
  const std::string path = FinalModelPath("", "", "/state", LoadRunModel(file, {}).label);
  EXPECT_EQ(std::filesystem::path(path).filename().string().rfind("my_net-", 0), 0u) << path;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace mt
