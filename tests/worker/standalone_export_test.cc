// mtworker --standalone with models as files, as a user runs it: a PyTorch
// ONNX file trained and exported, the export judged by onnx's checker and
// ONNX Runtime against mt's own logits; where the final model goes without
// --export; and the errors of fine-tuning flags, each a clear exit.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/model/model_spec.h"
#include "model_io/model_file.h"
#include "model_io/onnx_export.h"
#include "model_io/run_model.h"
#include "model_io/weights_fit.h"
#include "tests/support/cifar_writer.h"
#include "tests/support/files.h"
#include "tests/support/onnx_tools.h"
#include "tests/support/subprocess.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test_support::ReadJson;
using test_support::RunProcess;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

std::string Worker() { return test_support::BinaryPath("worker/mtworker"); }
std::string Fixture(const std::string& file) {
  return test_support::OnnxTestDir() + "/fixtures/" + file;
}

// mtworker with `args`, MT_STATE_DIR pointing at `state` (so a run without
// --export writes its model there, not into the state every test shares).
test_support::ProcessResult RunWorker(const fs::path& state, std::vector<std::string> args,
                                      double timeout_s = 300) {
  std::vector<std::string> argv = {"/usr/bin/env", "MT_STATE_DIR=" + state.string(), Worker()};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProcess(argv, timeout_s);
}

void ExpectFailure(const fs::path& state, const std::vector<std::string>& args, int code,
                   const std::string& needle) {
  const auto r = RunWorker(state, args, 120);
  EXPECT_EQ(r.exit_code, code) << r.output;
  EXPECT_THAT(r.output, HasSubstr(needle));
  EXPECT_THAT(r.output, Not(HasSubstr("Sanitizer")));
}

class StandaloneExport : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        test_support::FreshTempDir(std::string("sa-export-") +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
    data_ = dir_ / "cifar";
    test_support::WriteCifarDataset(data_, 256, 64, 3);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }
  fs::path dir_, data_;
};

TEST_F(StandaloneExport, TrainsAPyTorchFileAndExportsWhatOnnxRuntimeRuns) {
  const std::string fixture = Fixture("mobilenet_v2_style.onnx");
  const fs::path trained = dir_ / "trained.onnx", report = dir_ / "r.json";
  // 20 steps: enough to leave chance, which would fail the run (exit 1).
  const auto r =
      RunWorker(dir_ / "state", {"--standalone", "--model", fixture, "--dataset", data_.string(),
                                 "--steps", "20", "--batch", "32", "--threads", "2", "--export",
                                 trained.string(), "--report", report.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json j = ReadJson(report);
  EXPECT_EQ(j.value("steps", int64_t{0}), 20) << j.dump(2);
  EXPECT_EQ(j.value("model_file", ""), trained.string()) << j.dump(2);
  EXPECT_EQ(j.value("initial_weights", ""), fixture) << j.dump(2);
  ASSERT_TRUE(fs::is_regular_file(trained)) << r.output;

  // The export is the fixture's network with the trained weights.
  const LoadedModel before = LoadModelFile(fixture), after = LoadModelFile(trained.string());
  ASSERT_TRUE(before.weights && after.weights);
  EXPECT_EQ(ModelSpecToText(after.spec), ModelSpecToText(before.spec));
  ASSERT_EQ(after.weights->params.size(), before.weights->params.size());
  EXPECT_NE(after.weights->params, before.weights->params) << "20 steps changed no weight";
  EXPECT_NE(after.weights->running_stats, before.weights->running_stats);

  const std::string missing = test_support::OnnxToolsMissing();
  if (!missing.empty())
    GTEST_SKIP() << "the run and its export are checked; not in ONNX Runtime: " << missing;
  const auto check = test_support::CheckOnnxModel(trained);
  EXPECT_EQ(check.exit_code, 0) << check.output;
  const BuiltModel built = BuildOnCpu(after.spec);
  SetWeights(*built.model, *after.weights);
  const std::vector<float> input = test_support::ReadF32(Fixture("mobilenet_v2_style.input.f32"));
  ASSERT_EQ(input.size(), 4u * 3 * 32 * 32);
  const std::vector<float> ort = test_support::OrtLogits(trained, input, {4, 3, 32, 32}, dir_);
  const std::vector<float> ours = test_support::MtLogits(*built.model, input, 4);
  EXPECT_EQ(ort.size(), 40u);
  EXPECT_LT(test_support::MaxAbsDiff(ort, ours), 1e-4) << "ONNX Runtime and mt disagree";
  // And the training shows: PyTorch's logits for the untrained file differ.
  const std::vector<float> torch = test_support::ReadF32(Fixture("mobilenet_v2_style.logits.f32"));
  EXPECT_GT(test_support::MaxAbsDiff(ort, torch), 1e-4);
}

// No --export: the model lands in STATE_DIR/models/, or in the checkpoint
// directory as final.onnx; the report says where.
TEST_F(StandaloneExport, WithoutExportTheFinalModelGoesToTheStateOrCheckpointDir) {
  const fs::path state = dir_ / "state";
  // 40 steps: enough to leave chance, which would fail the run (exit 1).
  const std::vector<std::string> common = {"--standalone", "--model",      "mobilenet-tiny",
                                           "--dataset",    data_.string(), "--steps",
                                           "40",           "--batch",      "16"};
  auto args = common;
  args.insert(args.end(), {"--report", (dir_ / "a.json").string()});
  const auto a = RunWorker(state, args);
  ASSERT_EQ(a.exit_code, 0) << a.output;
  std::vector<fs::path> models;
  if (fs::is_directory(state / "models"))
    for (const auto& e : fs::directory_iterator(state / "models")) models.push_back(e.path());
  ASSERT_EQ(models.size(), 1u) << "expected one model in " << state / "models"
                               << "\n"
                               << a.output;
  EXPECT_EQ(models[0].extension(), ".onnx");
  EXPECT_THAT(models[0].filename().string(), ::testing::StartsWith("mobilenet-tiny-"));
  EXPECT_EQ(ReadJson(dir_ / "a.json").value("model_file", ""), models[0].string());
  const LoadedModel saved = LoadModelFile(models[0].string());
  EXPECT_EQ(saved.spec.name(), "mobilenet-tiny");
  EXPECT_TRUE(saved.weights.has_value());

  args = common;
  args.insert(args.end(),
              {"--checkpoint-dir", (dir_ / "ck").string(), "--report", (dir_ / "b.json").string()});
  const auto b = RunWorker(state, args);
  ASSERT_EQ(b.exit_code, 0) << b.output;
  EXPECT_TRUE(fs::is_regular_file(dir_ / "ck" / "final.onnx")) << b.output;
  EXPECT_EQ(ReadJson(dir_ / "b.json").value("model_file", ""),
            (dir_ / "ck" / "final.onnx").string());
  // Nothing more in the state directory: the checkpoint directory won.
  size_t in_state = 0;
  for (const auto& e : fs::directory_iterator(state / "models")) in_state += e.is_regular_file();
  EXPECT_EQ(in_state, 1u);
}

// LeNet-5's weights cannot start mobilenet-tiny: the very first layer with
// weights differs (LeNet-5's conv1 is 6x1x5x5 + 6, mobilenet-tiny's stem
// 16x3x3x3), and the message must say which layer, not only a count, as
// model_io/weights_fit.h promises.
TEST_F(StandaloneExport, InitFromAnotherModelsWeightsNamesTheLayerThatDoesNotFit) {
  const proto::ModelSpec lenet = LoadModelSpec("lenet5");
  const BuiltModel built = BuildOnCpu(lenet);
  built.model->InitParams(3);
  const fs::path lenet_file = dir_ / "lenet5.onnx";
  ExportOnnx(lenet, WeightsOf(*built.model), lenet_file.string());
  const auto wrong = RunWorker(dir_ / "state",
                               {"--standalone", "--model", "mobilenet-tiny", "--init-from",
                                lenet_file.string(), "--dataset", data_.string(), "--steps", "1"},
                               120);
  EXPECT_EQ(wrong.exit_code, 1) << wrong.output;
  EXPECT_THAT(wrong.output, HasSubstr(lenet_file.string()));
  EXPECT_THAT(wrong.output, ContainsRegex("\\b(stem|conv1)\\b")) << "the message names no layer:\n"
                                                                 << wrong.output;
  EXPECT_FALSE(fs::exists(dir_ / "state" / "models"));
}

TEST_F(StandaloneExport, FineTuningFlagErrorsNameWhatIsWrong) {
  const fs::path state = dir_ / "state";
  // Never read: the flags conflict before any file is opened.
  const fs::path init_file = dir_ / "init.onnx";
  std::ofstream(init_file) << "not an ONNX file";
  ExpectFailure(state,
                {"--standalone", "--model", "mobilenet-tiny", "--freeze", "nosuchlayer",
                 "--dataset", data_.string(), "--steps", "1"},
                1, "nosuchlayer");
  ExpectFailure(state,
                {"--standalone", "--model", "mobilenet-tiny", "--resume", "--checkpoint-dir",
                 (dir_ / "ck").string(), "--init-from", init_file.string()},
                2, "--init-from");
  // A cut-off file is an error naming it, not a crash.
  const std::string truncated = Fixture("truncated.onnx");
  ExpectFailure(state,
                {"--standalone", "--model", truncated, "--dataset", data_.string(), "--steps", "1"},
                1, truncated);
  // None of them left a model behind.
  EXPECT_FALSE(fs::exists(state / "models"));
}

}  // namespace
}  // namespace mt
