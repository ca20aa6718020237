// What ExportOnnx writes is what ONNX Runtime runs: models trained a few
// steps in mt (so batch norm's running statistics and every weight are far
// from their initial values) are exported, checked by onnx's own checker,
// and run in ONNX Runtime (WASM, in node); its logits must equal mt's to
// 1e-4. A fixture from PyTorch goes through import, training and export.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <random>

#include "core/model/model_spec.h"
#include "core/optim/optimizer.h"
#include "kernels/cpu/cpu_backend.h"
#include "model_io/onnx_export.h"
#include "model_io/onnx_import.h"
#include "model_io/run_model.h"
#include "tests/support/files.h"
#include "tests/support/onnx_tools.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using test_support::MaxAbsDiff;

constexpr int kBatch = 4;  // samples run through both runtimes
constexpr double kTolerance = 1e-4;

class ExportOrt : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string missing = test_support::OnnxToolsMissing();
    if (!missing.empty()) GTEST_SKIP() << missing;
    dir_ =
        test_support::FreshTempDir(std::string("export-ort-") +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  void TearDown() override {
    if (!dir_.empty() && !HasFailure()) fs::remove_all(dir_);
  }

  // `spec` on a CPU backend, from `initial` (else seed-initialised), after
  // `steps` SGD steps on random batches of 16 with random labels: batch norm
  // in training mode moves its running statistics off (0, 1).
  std::unique_ptr<Model> Trained(const proto::ModelSpec& spec, const ModelWeights* initial,
                                 int steps) {
    std::unique_ptr<Model> model = BuildModel(spec, backend_);
    if (initial)
      SetWeights(*model, *initial);
    else
      model->InitParams(11);
    const ModelWeights before = WeightsOf(*model);
    OptimizerConfig sgd;
    sgd.lr = 0.02f;
    auto optimizer = MakeOptimizer(sgd, backend_, model->ParamCount());
    const int batch = 16;
    model->Reserve(batch);
    std::mt19937 rng(5);
    std::uniform_int_distribution<int32_t> label(0, model->num_classes() - 1);
    for (int s = 0; s < steps; ++s) {
      const std::vector<float> images =
          test_support::FixedInput(batch * model->input_shape().count(), 100 + s);
      std::vector<int32_t> labels(batch);
      for (int32_t& l : labels) l = label(rng);
      model->SetBatch(images.data(), labels.data(), batch);
      model->ComputeGradients(static_cast<uint64_t>(s));
      optimizer->Step(model->params(), model->grads());
    }
    if (steps == 0) return model;
    // The export must carry what training changed, or matching logits prove little.
    const ModelWeights after = WeightsOf(*model);
    EXPECT_NE(after.params, before.params) << spec.name() << ": training changed no weight";
    if (!after.running_stats.empty()) {
      EXPECT_NE(after.running_stats, before.running_stats)
          << spec.name() << ": training left batch norm's statistics where they were";
    }
    return model;
  }

  // Exports `model`, checks the file with onnx's checker, and compares ONNX
  // Runtime's logits on a fixed batch with mt's. Returns ORT's logits.
  std::vector<float> ExpectOrtMatches(const proto::ModelSpec& spec, Model& model,
                                      const std::string& name,
                                      const std::vector<float>* input_in = nullptr) {
    const fs::path file = dir_ / (name + ".onnx");
    ExportOnnx(spec, WeightsOf(model), file.string());
    const auto check = test_support::CheckOnnxModel(file);
    EXPECT_EQ(check.exit_code, 0) << name << ": onnx's checker rejects the export:\n"
                                  << check.output;
    const Shape in = model.input_shape();
    const std::vector<float> input =
        input_in ? *input_in : test_support::FixedInput(kBatch * in.count(), 42);
    const std::vector<float> ort =
        test_support::OrtLogits(file, input, {kBatch, in[0], in[1], in[2]}, dir_);
    const std::vector<float> ours = test_support::MtLogits(model, input, kBatch);
    EXPECT_EQ(ort.size(), static_cast<size_t>(kBatch * model.num_classes())) << name;
    EXPECT_LT(MaxAbsDiff(ort, ours), kTolerance) << name << ": ONNX Runtime and mt disagree";
    // Logits that are all alike would agree whatever the export got wrong.
    EXPECT_GT(MaxAbsDiff(ours, std::vector<float>(ours.size(), ours.empty() ? 0 : ours[0])), 1e-2)
        << name << ": the logits barely vary; the comparison would prove nothing";
    return ort;
  }

  kernels::CpuBackend backend_{1};
  fs::path dir_;
};

TEST_F(ExportOrt, MobileNetTinyTrainedRunsInOnnxRuntime) {
  const proto::ModelSpec spec = LoadModelSpec("mobilenet-tiny");
  auto model = Trained(spec, nullptr, 5);
  EXPECT_EQ(model->ParamCount(), 45386u);
  ExpectOrtMatches(spec, *model, "mobilenet_tiny");
}

TEST_F(ExportOrt, LeNet5TrainedRunsInOnnxRuntime) {
  const proto::ModelSpec spec = LoadModelSpec("lenet5");
  auto model = Trained(spec, nullptr, 5);
  ExpectOrtMatches(spec, *model, "lenet5");
}

// PyTorch's file, imported: re-exported as is it reproduces PyTorch's own
// logits; trained in mt and exported it still runs in ONNX Runtime as in mt.
TEST_F(ExportOrt, ImportedResidualFixtureReExportsAndTrains) {
  const std::string fixtures = test_support::OnnxTestDir() + "/fixtures/";
  const LoadedModel loaded = ImportOnnx(fixtures + "small_residual_opset17.onnx");
  ASSERT_TRUE(loaded.weights.has_value());
  const std::vector<float> input =
      test_support::ReadF32(fixtures + "small_residual_opset17.input.f32");
  const std::vector<float> torch =
      test_support::ReadF32(fixtures + "small_residual_opset17.logits.f32");
  ASSERT_EQ(input.size(), static_cast<size_t>(kBatch * 3 * 32 * 32));

  auto as_imported = Trained(loaded.spec, &*loaded.weights, 0);
  const std::vector<float> ort =
      ExpectOrtMatches(loaded.spec, *as_imported, "residual_reexported", &input);
  EXPECT_LT(MaxAbsDiff(ort, torch), kTolerance)
      << "the re-export no longer computes PyTorch's model";

  auto trained = Trained(loaded.spec, &*loaded.weights, 5);
  const std::vector<float> after =
      ExpectOrtMatches(loaded.spec, *trained, "residual_trained", &input);
  EXPECT_GT(MaxAbsDiff(after, torch), kTolerance) << "training changed nothing ORT can see";
}

}  // namespace
}  // namespace mt
