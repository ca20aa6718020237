// Image folders as a user trains on them, through the real binaries: a PNG
// folder trains exactly as the same samples in IDX files do, a JPEG folder
// within a few points, a hub with three workers on one folder, a folder of
// three classes gets a model of three named outputs whose ONNX export runs
// in ONNX Runtime from raw pixels with nothing but its metadata, and bad
// files stop the run naming the file (or are skipped and counted).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/model/model_spec.h"
#include "core/util/rng.h"
#include "kernels/cpu/cpu_backend.h"
#include "model_io/onnx_export.h"
#include "model_io/run_model.h"
#include "onnx/onnx_pb.h"
#include "tests/support/cluster_processes.h"
#include "tests/support/files.h"
#include "tests/support/idx_writer.h"
#include "tests/support/image_writer.h"
#include "tests/support/onnx_tools.h"
#include "tests/support/subprocess.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test_support::ReadJson;
using test_support::RunProcess;
using ::testing::HasSubstr;

std::string Worker() { return test_support::BinaryPath("worker/mtworker"); }

class ImageFolderRun : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        test_support::FreshTempDir(std::string("image-folder-") +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }
  // mt_write_image_folder SOURCE OUT args...
  void WriteFolder(const fs::path& source, const fs::path& out, std::vector<std::string> args) {
    std::vector<std::string> argv = {test_support::BinaryPath("tests/mt_write_image_folder"),
                                     source.string(), out.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto r = RunProcess(argv, 120);
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  json Standalone(const std::string& name, std::vector<std::string> args) {
    const fs::path report = dir_ / (name + ".json");
    std::vector<std::string> argv = {Worker(),   "--standalone",
                                     "--report", report.string(),
                                     "--export", (dir_ / (name + ".onnx")).string()};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto r = RunProcess(argv, 300);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return r.exit_code == 0 ? ReadJson(report) : json::object();
  }
  void TrainThreeAndRunInOrt(const std::vector<std::string>& model, const std::string& want_mean);
  fs::path dir_;
};

TEST_F(ImageFolderRun, PngTrainsAsTheSameSamplesInIdxFilesAndJpegClose) {
  fs::create_directories(dir_ / "idx");
  test_support::WriteIdxDataset((dir_ / "idx").string(), 1200, 300, 7);
  WriteFolder(dir_ / "idx", dir_ / "png", {"--same-order", (dir_ / "same").string()});
  WriteFolder(dir_ / "idx", dir_ / "jpeg", {"--format", "jpeg", "--quality", "90"});
  const std::vector<std::string> common = {"--epochs", "1", "--augment", "none", "--seed", "3"};
  auto with = [&](const fs::path& data) {
    std::vector<std::string> a = common;
    a.insert(a.end(), {"--dataset", data.string()});
    return a;
  };
  const json idx = Standalone("idx", with(dir_ / "same"));
  const json png = Standalone("png", with(dir_ / "png"));
  const json jpeg = Standalone("jpeg", with(dir_ / "jpeg"));
  ASSERT_TRUE(idx.contains("test_accuracy") && png.contains("test_accuracy"));
  // Lossless, in the same order: the same run to the last bit.
  EXPECT_EQ(png["test_accuracy"], idx["test_accuracy"]);
  EXPECT_EQ(png["test_loss"], idx["test_loss"]);
  EXPECT_GT(idx["test_accuracy"].get<double>(), 0.5);
  EXPECT_NEAR(jpeg["test_accuracy"].get<double>(), idx["test_accuracy"].get<double>(), 0.05);
  EXPECT_EQ(png["class_names"], json({"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}));
  EXPECT_EQ(png["augment"], "none");
  EXPECT_EQ(idx["class_names"], json::array());
  // Augmentation is on by default for folders only, and reproducible.
  std::vector<std::string> augmented = {"--epochs", "1", "--dataset", (dir_ / "png").string()};
  const json a1 = Standalone("aug1", augmented), a2 = Standalone("aug2", augmented);
  EXPECT_EQ(a1["augment"], "flip, crop 3");
  EXPECT_EQ(a1["test_loss"], a2["test_loss"]);
  EXPECT_NE(a1["test_loss"], png["test_loss"]);
}

TEST_F(ImageFolderRun, HubAndThreeWorkersTrainOnOneFolder) {
  fs::create_directories(dir_ / "idx");
  test_support::WriteIdxDataset((dir_ / "idx").string(), 1200, 300, 9);
  WriteFolder(dir_ / "idx", dir_ / "png", {});
  std::unique_ptr<test_support::ChildProcess> hub;
  const int port = test_support::StartHub(
      hub, dir_,
      // Mirroring keeps these pictures' classes (bands of rows); shifting
      // them, the default, would move a band to the next class's rows.
      {"--workers", "3", "--dataset", (dir_ / "png").string(), "--augment", "flip", "--epochs", "2",
       "--report", (dir_ / "hub.json").string(), "--export", (dir_ / "hub.onnx").string()});
  ASSERT_GT(port, 0);
  std::vector<std::unique_ptr<test_support::ChildProcess>> workers;
  for (int i = 0; i < 3; ++i)
    workers.push_back(test_support::StartWorker(dir_, "w" + std::to_string(i), port));
  for (auto& w : workers) EXPECT_EQ(w->Wait(300), 0) << w->Log();
  ASSERT_EQ(hub->Wait(60), 0) << hub->Log();
  const json r = ReadJson(dir_ / "hub.json");
  EXPECT_GT(r["test_accuracy"].get<double>(), 0.5);
  EXPECT_EQ(r["augment"], "flip");
  EXPECT_EQ(r["class_names"].size(), 10u);
}

// Three classes of colour pictures of odd sizes: bright left, bright right,
// bright top, with noise.
void WriteThreeClasses(const fs::path& root, int per_class, int w, int h, uint64_t seed,
                       bool grey_at_model_size) {
  Rng rng(seed);
  const char* names[3] = {"cat", "dog", "fish"};
  for (int c = 0; c < 3; ++c) {
    fs::create_directories(root / names[c]);
    for (int i = 0; i < per_class; ++i) {
      const int channels = grey_at_model_size ? 1 : 3;
      std::vector<uint8_t> p(static_cast<size_t>(w) * h * channels);
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
          const bool lit = c == 0 ? x < w / 2 : c == 1 ? x >= w / 2 : y < h / 2;
          for (int ch = 0; ch < channels; ++ch)
            p[(static_cast<size_t>(y) * w + x) * channels + ch] =
                static_cast<uint8_t>((lit ? 150 : 30) + rng.Below(100));
        }
      test_support::WritePng(root / names[c] / (std::to_string(i) + ".png"), w, h, channels, p);
    }
  }
}

// Trains lenet5 (or `model`) on three classes of pictures, exports it, and
// runs the export in ONNX Runtime on the test pictures' raw pixels scaled
// only as its metadata says: the accuracy must be mt's, and the metadata's
// mean `want_mean`.
void ImageFolderRun::TrainThreeAndRunInOrt(const std::vector<std::string>& model,
                                           const std::string& want_mean) {
  WriteThreeClasses(dir_ / "photos" / "train", 60, 45, 37, 1, false);
  WriteThreeClasses(dir_ / "photos" / "test", 20, 28, 28, 2, true);  // lenet5's own size
  // No flips: cat and dog are each other's mirror images, so flipped
  // samples carry the other's label, and a run that ends between the two
  // is (rightly) refused as collapsed.
  std::vector<std::string> args = {
      "--dataset", (dir_ / "photos").string(), "--epochs", "3", "--batch", "16", "--augment",
      "crop"};
  args.insert(args.end(), model.begin(), model.end());
  const json r = Standalone("three", args);
  ASSERT_TRUE(r.contains("test_accuracy"));
  EXPECT_EQ(r["class_names"], json({"cat", "dog", "fish"}));
  onnx::ModelProto m;
  std::ifstream in(dir_ / "three.onnx", std::ios::binary);
  ASSERT_TRUE(m.ParseFromIstream(&in));
  std::map<std::string, std::string> meta;
  for (const auto& p : m.metadata_props()) meta[p.key()] = p.value();
  EXPECT_EQ(json::parse(meta["mt.class_names"]), json({"cat", "dog", "fish"}));
  EXPECT_EQ(meta["mt.input_mean"], want_mean);
  const json training = json::parse(meta["mt.training"]);
  EXPECT_EQ(training["test_accuracy"], r["test_accuracy"]);
  EXPECT_EQ(m.graph().output(0).type().tensor_type().shape().dim(1).dim_value(), 3);
  // Raw pixels of the test pictures, scaled only as the metadata says.
  const double mean = json::parse(meta["mt.input_mean"])[0].get<double>(),
               std = json::parse(meta["mt.input_std"])[0].get<double>();
  std::vector<float> input;
  std::vector<int> labels;
  for (int c = 0; c < 3; ++c) {
    for (int i = 0; i < 20; ++i) {
      // The test wrote these with libpng as grey 28x28; read them back raw.
      const fs::path file = dir_ / "photos" / "test" /
                            json({"cat", "dog", "fish"})[c].get<std::string>() /
                            (std::to_string(i) + ".png");
      std::vector<uint8_t> pixels;
      ASSERT_TRUE(test_support::ReadGreyPng(file, 28, 28, pixels)) << file;
      for (uint8_t v : pixels) input.push_back(static_cast<float>((v / 255.0 - mean) / std));
      labels.push_back(c);
    }
  }
  const auto logits = test_support::OrtLogits(dir_ / "three.onnx", input, {60, 1, 28, 28}, dir_);
  ASSERT_EQ(logits.size(), 180u);
  int right = 0;
  for (int i = 0; i < 60; ++i) {
    const float* l = &logits[static_cast<size_t>(i) * 3];
    right += static_cast<int>(std::max_element(l, l + 3) - l) == labels[static_cast<size_t>(i)];
  }
  EXPECT_NEAR(right / 60.0, r["test_accuracy"].get<double>(), 0.005);
  EXPECT_GT(right / 60.0, 0.6);
  // The README's command for trying a model on pictures: decodes, scales
  // by the metadata and names the class; it must agree with mt.
  std::vector<std::string> classify = {test_support::FindOnPath("node"),
                                       test_support::OnnxTestDir() + "/classify.mjs",
                                       (dir_ / "three.onnx").string()};
  for (const std::string name : {"cat", "dog", "fish"})
    for (int i = 0; i < 20; ++i)
      classify.push_back((dir_ / "photos" / "test" / name / (std::to_string(i) + ".png")).string());
  const test_support::ProcessResult c = test_support::RunProcess(classify, 180);
  ASSERT_EQ(c.exit_code, 0) << c.output;
  std::istringstream lines(c.output);
  std::string line;
  int named_right = 0, answers = 0;
  for (int i = 0; std::getline(lines, line); ++i) {
    const json a = json::parse(line);
    ++answers;
    named_right += a["class"] == json({"cat", "dog", "fish"})[i / 20];
  }
  EXPECT_EQ(answers, 60) << c.output;
  EXPECT_NEAR(named_right / 60.0, r["test_accuracy"].get<double>(), 0.005) << c.output;
}

TEST_F(ImageFolderRun, ThreeClassesGiveThreeNamedOutputsThatOnnxRuntimeReproducesFromRawPixels) {
  const std::string missing = test_support::OnnxToolsMissing();
  if (!missing.empty()) GTEST_SKIP() << missing;
  TrainThreeAndRunInOrt({}, "[0.5]");
}

TEST_F(ImageFolderRun, AModelsOwnInputScalingIsWhatTrainingAndTheExportUse) {
  const std::string missing = test_support::OnnxToolsMissing();
  if (!missing.empty()) GTEST_SKIP() << missing;
  // A model file that says its inputs are (image - 0.2) / 0.3, as a
  // PyTorch user's normalisation would.
  proto::ModelSpec spec = LoadModelSpec("lenet5");
  spec.mutable_layer(spec.layer_size() - 1)->mutable_dense()->set_units(3);
  spec.add_input_mean(0.2f);
  spec.add_input_std(0.3f);
  kernels::CpuBackend cpu(1);
  const auto model = BuildModel(spec, cpu);
  model->InitParams(4);
  ExportOnnx(spec, WeightsOf(*model), (dir_ / "scaled.onnx").string());
  TrainThreeAndRunInOrt({"--model", (dir_ / "scaled.onnx").string()}, "[0.2]");
}

TEST_F(ImageFolderRun, ABadFileStopsTheRunByNameOrIsSkippedAndCounted) {
  WriteThreeClasses(dir_ / "photos", 10, 30, 30, 3, false);
  std::ofstream(dir_ / "photos" / "dog" / "broken.jpg") << "not a jpeg at all";
  const std::vector<std::string> args = {Worker(),    "--standalone",
                                         "--dataset", (dir_ / "photos").string(),
                                         "--steps",   "2",
                                         "--report",  (dir_ / "bad.json").string()};
  auto r = RunProcess(args, 120);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr((dir_ / "photos" / "dog" / "broken.jpg").string()));
  EXPECT_THAT(r.output, HasSubstr("--skip-bad-images"));
  std::vector<std::string> skipping = args;
  skipping.push_back("--skip-bad-images");
  r = RunProcess(skipping, 120);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(ReadJson(dir_ / "bad.json")["skipped_images"], 1);
  // A mistyped --augment is a usage error.
  std::vector<std::string> typo = args;
  typo.insert(typo.end(), {"--augment", "flipp"});
  r = RunProcess(typo, 60);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("flipp"));
}

}  // namespace
}  // namespace mt
