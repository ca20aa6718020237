// Issue 29's item 9 end to end, as a user runs it: a MobileNetV3/
// SqueezeNet-style PyTorch export (tests/onnx/make_mobile_fixtures.py: SE
// gate by Mul, Fire's Concat, padded pooling, ReduceMean) imports, trains
// under mtworker --standalone with its loss going down, and exports a file
// that ONNX Runtime runs to mt's own logits within 1e-4.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "core/model/model_spec.h"
#include "model_io/model_file.h"
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

std::string Fixture(const std::string& file) {
  return test_support::OnnxTestDir() + "/fixtures/" + file;
}

class MobileOpsTraining : public ::testing::TestWithParam<std::string> {};

TEST_P(MobileOpsTraining, ImportsTrainsAndExportsWhatOnnxRuntimeRunsAsMtDoes) {
  const std::string name = GetParam();
  const fs::path dir = test_support::FreshTempDir("mobile-ops-" + name);
  const fs::path data = dir / "cifar", trained = dir / "trained.onnx", report = dir / "r.json";
  test_support::WriteCifarDataset(data, 256, 64, 3);
  const std::string fixture = Fixture(name + ".onnx");
  // 5 epochs of 8 steps: the first epoch's mean loss against the last's.
  const auto r = test_support::RunProcess(
      {"/usr/bin/env", "MT_STATE_DIR=" + (dir / "state").string(),
       test_support::BinaryPath("worker/mtworker"), "--standalone", "--model", fixture, "--dataset",
       data.string(), "--steps", "40", "--batch", "32", "--threads", "2", "--export",
       trained.string(), "--report", report.string()},
      300);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json j = test_support::ReadJson(report);
  ASSERT_GE(j["epochs"].size(), 2u) << j.dump(2);
  const double first = j["epochs"].front()["train_loss"], last = j["epochs"].back()["train_loss"];
  EXPECT_LT(last, 0.9 * first) << "training did not lower the loss:\n" << j.dump(2);

  // The export is the fixture's network with new weights.
  const LoadedModel before = LoadModelFile(fixture), after = LoadModelFile(trained.string());
  ASSERT_TRUE(before.weights && after.weights);
  EXPECT_EQ(ModelSpecToText(after.spec), ModelSpecToText(before.spec));
  EXPECT_NE(after.weights->params, before.weights->params);

  const std::string missing = test_support::OnnxToolsMissing();
  if (!missing.empty()) GTEST_SKIP() << "trained and exported; not in ONNX Runtime: " << missing;
  const auto check = test_support::CheckOnnxModel(trained);
  EXPECT_EQ(check.exit_code, 0) << check.output;
  const BuiltModel built = BuildOnCpu(after.spec);
  SetWeights(*built.model, *after.weights);
  const std::vector<float> input = test_support::ReadF32(Fixture(name + ".input.f32"));
  ASSERT_EQ(input.size(), 4u * 3 * 32 * 32);
  const std::vector<float> ort = test_support::OrtLogits(trained, input, {4, 3, 32, 32}, dir);
  const std::vector<float> ours = test_support::MtLogits(*built.model, input, 4);
  ASSERT_EQ(ort.size(), 40u);
  EXPECT_LT(test_support::MaxAbsDiff(ort, ours), 1e-4) << "ONNX Runtime and mt disagree";
  if (!HasFailure()) fs::remove_all(dir);
}

// mobile_ops (with Hardswish and Hardsigmoid) joins once model.proto has
// those layer kinds (issue 29's activation branch); its twin with ReLU runs
// on every tree.
std::vector<std::string> Fixtures() {
  std::vector<std::string> names = {"mobile_ops_relu"};
  if (proto::Layer::descriptor()->FindFieldByName("hard_swish")) names.push_back("mobile_ops");
  return names;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, MobileOpsTraining, ::testing::ValuesIn(Fixtures()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace mt
