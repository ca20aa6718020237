// PyTorch's own exports (tests/onnx/fixtures, eval-mode logits saved beside
// them) imported and run by mt: the same log-probabilities within 1e-4.
// Model::Evaluate gives the loss, -log softmax(logits)[label], so one pass
// per (sample, label) reads the log-softmax without a logits API.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/model/model_spec.h"
#include "kernels/cpu/cpu_backend.h"
#include "model_io/onnx_export.h"
#include "model_io/onnx_import.h"
#include "onnx/onnx_pb.h"

namespace mt {
namespace {

namespace fs = std::filesystem;

const fs::path kFixtures = fs::path(MT_SOURCE_DIR) / "tests/onnx/fixtures";

std::vector<float> ReadFloats(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<float> v(bytes.size() / sizeof(float));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
  return v;
}

std::vector<double> LogSoftmax(const float* logits, int classes) {
  double max = logits[0], sum = 0;
  for (int c = 0; c < classes; ++c) max = std::max<double>(max, logits[c]);
  for (int c = 0; c < classes; ++c) sum += std::exp(logits[c] - max);
  std::vector<double> out(classes);
  for (int c = 0; c < classes; ++c) out[c] = logits[c] - max - std::log(sum);
  return out;
}

// mt's log-softmax for each sample of `images` against PyTorch's logits.
void ExpectSameOutputs(const LoadedModel& loaded, const std::vector<float>& images,
                       const std::vector<float>& logits, const std::string& what) {
  kernels::CpuBackend cpu(1);
  auto model = BuildModel(loaded.spec, cpu);
  model->SetParams(loaded.weights->params.data());
  if (model->RunningStatCount()) model->SetRunningStats(loaded.weights->running_stats.data());
  model->Reserve(1);
  const int classes = model->num_classes();
  const size_t per_sample = model->input_shape().count();
  const size_t samples = images.size() / per_sample;
  ASSERT_EQ(logits.size(), samples * classes) << what;
  for (size_t s = 0; s < samples; ++s) {
    const std::vector<double> want = LogSoftmax(logits.data() + s * classes, classes);
    for (int c = 0; c < classes; ++c) {
      const int32_t label = c;
      model->SetBatch(images.data() + s * per_sample, &label, 1);
      const double got = -model->Evaluate(nullptr);
      EXPECT_NEAR(got, want[c], 1e-4) << what << " sample " << s << " class " << c;
    }
  }
}

class PyTorchFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(PyTorchFixture, ImportsAndComputesPyTorchsLogits) {
  const fs::path onnx_file = kFixtures / (GetParam() + ".onnx");
  if (!fs::exists(onnx_file)) GTEST_SKIP() << onnx_file << " missing";
  const LoadedModel loaded = ImportOnnx(onnx_file.string());
  ASSERT_TRUE(loaded.weights);
  const auto images = ReadFloats(kFixtures / (GetParam() + ".input.f32"));
  const auto logits = ReadFloats(kFixtures / (GetParam() + ".logits.f32"));
  ExpectSameOutputs(loaded, images, logits, GetParam());
  // Exported and imported again, it computes the same.
  const LoadedModel again = ImportOnnxBytes(ExportOnnxBytes(loaded.spec, *loaded.weights), "again");
  EXPECT_EQ(ModelSpecToText(again.spec), ModelSpecToText(loaded.spec));
  EXPECT_EQ(again.weights->params, loaded.weights->params);
  EXPECT_EQ(again.weights->running_stats, loaded.weights->running_stats);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, PyTorchFixture,
                         ::testing::Values("mobilenet_v2_style", "mobilenet_v2_style_folded",
                                           "mobilenet_tiny", "small_cnn_opset11",
                                           "small_residual_opset17", "activations_opset13",
                                           "activations_opset14"));

TEST(PyTorchFixtures, BatchNormFoldedByTheDefaultExportIsSaidWithTheFlagsThatKeepIt) {
  // The same net exported both ways by tests/onnx/make_fixtures.py.
  const LoadedModel folded = ImportOnnx((kFixtures / "mobilenet_v2_style_folded.onnx").string());
  ASSERT_EQ(folded.warnings.size(), 1u);
  EXPECT_NE(folded.warnings[0].find("batch norm looks folded into 25 convolution(s)"),
            std::string::npos)
      << folded.warnings[0];
  EXPECT_NE(folded.warnings[0].find("TrainingMode.PRESERVE"), std::string::npos);
  EXPECT_NE(folded.warnings[0].find("do_constant_folding=False"), std::string::npos);
  for (const char* kept : {"mobilenet_v2_style", "mobilenet_tiny", "small_cnn_opset11"})
    EXPECT_TRUE(ImportOnnx((kFixtures / (std::string(kept) + ".onnx")).string()).warnings.empty())
        << kept;
  // Ours carry module-style names: exported and imported again, no warning.
  EXPECT_TRUE(
      ImportOnnxBytes(ExportOnnxBytes(folded.spec, *folded.weights), "again").warnings.empty());
}

TEST(PyTorchFixtures, LayersAreNamedByTheirModulePathsAsTheWeightsAre) {
  // "/features/features.1/body/body.0/body.0.0/Conv", weights
  // "features.1.body.0.0.weight": the layer is "features.1.body.0.0".
  const LoadedModel m = ImportOnnx((kFixtures / "mobilenet_v2_style.onnx").string());
  std::set<std::string> names;
  for (const auto& layer : m.spec.layer()) names.insert(layer.name());
  for (const char* path : {"features.0.0", "features.0.1", "features.1.body.0.0", "classifier"})
    EXPECT_EQ(names.count(path), 1u) << path;
  // Every weighted layer's name is its weights' prefix, as in state_dict().
  onnx::ModelProto proto;
  std::ifstream in(kFixtures / "mobilenet_v2_style.onnx", std::ios::binary);
  ASSERT_TRUE(proto.ParseFromIstream(&in));
  for (const auto& init : proto.graph().initializer()) {
    const std::string& w = init.name();
    if (w.size() > 7 && w.compare(w.size() - 7, 7, ".weight") == 0) {
      EXPECT_EQ(names.count(w.substr(0, w.size() - 7)), 1u) << w;
    }
  }
}

TEST(PyTorchFixtures, UnsupportedAndTruncatedAreRefusedByName) {
  if (!fs::exists(kFixtures / "unsupported_op.onnx")) GTEST_SKIP();
  try {
    ImportOnnx((kFixtures / "unsupported_op.onnx").string());
    ADD_FAILURE() << "imported";
  } catch (const OnnxError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("Softplus"));
  }
  EXPECT_THROW(ImportOnnx((kFixtures / "truncated.onnx").string()), OnnxError);
}

}  // namespace
}  // namespace mt
