// mtworker --standalone's evaluation flags, from the training loop the hub
// runs too (core/train/training_loop.h): --eval-every's points, a
// --target-accuracy that ends the run, --patience, in the report under the
// keys mthub's report uses (tests/hub/time_to_accuracy_test.cc). Real
// processes on a small learnable IDX dataset.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "tests/support/files.h"
#include "tests/support/history_check.h"
#include "tests/support/idx_writer.h"
#include "tests/support/subprocess.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test_support::ReadJson;
using test_support::RunProcess;

class StandaloneEvaluation : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test_support::FreshTempDir("standalone-eval");
    data_ = dir_ / "data";
    fs::create_directories(data_);
    test_support::WriteIdxDataset(data_.string(), 3000, 500, 5);
  }
  void TearDown() override { fs::remove_all(dir_); }

  json Train(std::vector<std::string> args) {
    std::vector<std::string> argv = {test_support::BinaryPath("worker/mtworker"),
                                     "--standalone",
                                     "--dataset",
                                     data_.string(),
                                     "--report",
                                     (dir_ / "r.json").string(),
                                     "--export",
                                     (dir_ / "m.mtc").string()};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto r = RunProcess(argv, 300);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return ReadJson(dir_ / "r.json");
  }

  fs::path dir_, data_;
};

TEST_F(StandaloneEvaluation, EvalEveryRecordsEachEvaluationWithItsTimeAndSamples) {
  const json r = Train({"--steps", "35", "--eval-every", "10"});  // inside the first epoch
  ASSERT_EQ(r["steps"], 35);
  // Every 10 steps and the final weights.
  test_support::ExpectEvaluatedAt(r, {10, 20, 30, 35}, 64);
  ASSERT_EQ(r["epochs"].size(), 1u);
  EXPECT_EQ(r["epochs"][0]["complete"], false);
  EXPECT_EQ(r["target_accuracy"], -1);
  EXPECT_EQ(r["seconds_to_target"], -1);
  EXPECT_EQ(r["step_to_target"], -1);
  EXPECT_EQ(r["stopped_early"], false);
}

TEST_F(StandaloneEvaluation, ATargetStopsTheRunAtTheFirstEvaluationThatReachesIt) {
  // SGD, which takes a few evaluations to get there (Adam is past 0.5 at the first).
  const json r = Train(
      {"--epochs", "10", "--eval-every", "5", "--target-accuracy", "0.5", "--optimizer", "sgd"});
  EXPECT_EQ(r["stopped_early"], true);
  EXPECT_EQ(r["stop_reason"], "target accuracy reached");
  EXPECT_EQ(r["target_accuracy"], 0.5);
  const int64_t at = r["step_to_target"];
  ASSERT_GT(at, 0);
  EXPECT_EQ(at % 5, 0);
  // The step is not in flight elsewhere, as a hub's is: no step follows.
  EXPECT_EQ(r["steps"], at);
  const json& history = r["eval_history"];
  ASSERT_GE(history.size(), 2u) << "the target was not missed first: " << history.dump();
  EXPECT_EQ(history.back()["step"], at);
  for (size_t i = 0; i + 1 < history.size(); ++i)
    EXPECT_LT(history[i]["test_accuracy"], 0.5) << "reached earlier, at " << history[i]["step"];
  EXPECT_GE(history.back()["test_accuracy"], 0.5);
  EXPECT_EQ(history.back()["seconds"], r["seconds_to_target"]);
  EXPECT_EQ(r["test_accuracy"], history.back()["test_accuracy"]);
  ASSERT_FALSE(r["epochs"].empty());
  EXPECT_EQ(r["epochs"].back()["step"], at);
}

TEST_F(StandaloneEvaluation, PatienceStopsOnceTheTestLossHasNotImprovedForThatManyEpochs) {
  // A third of the test labels shifted by one class: the better the model
  // learns the training set, the worse its test loss, so it stops improving
  // early. (All of them shifted made a test loss 18 times a uniform guess's:
  // a broken model, exit 1.)
  const fs::path labels = data_ / "t10k-labels-idx1-ubyte";
  std::vector<char> bytes;
  {
    std::ifstream in(labels, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  for (size_t i = 8; i < bytes.size(); i += 3) bytes[i] = static_cast<char>((bytes[i] + 1) % 10);
  std::ofstream(labels, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));

  const json r = Train({"--epochs", "12", "--batch", "256", "--patience", "2"});
  const json& epochs = r["epochs"];
  ASSERT_GE(epochs.size(), 3u) << r.dump(2);
  size_t best = 0;
  for (size_t i = 1; i < epochs.size(); ++i)
    if (epochs[i]["test_loss"] < epochs[best]["test_loss"]) best = i;
  // Two epochs after the best, and no later.
  EXPECT_EQ(epochs.size(), best + 3) << r.dump(2);
  EXPECT_EQ(r["stopped_early"], true);
  EXPECT_EQ(r["stop_reason"], "early stop: test loss has not improved for 2 epoch(s)");
  EXPECT_EQ(r["steps"], epochs.back()["step"]);
}

// --optimizer adam without --lr used to train at SGD's 0.05, and LeNet-5
// on Fashion-MNIST stayed at chance; the default now follows the
// optimizer and the batch (DefaultLearningRate). Adam is the default.
TEST_F(StandaloneEvaluation, AdamIsTheDefaultAtItsOwnRateAndTrains) {
  const json adam = Train({"--epochs", "1"});
  EXPECT_EQ(adam["optimizer"], "adam");
  EXPECT_NEAR(adam["lr"].get<double>(), 0.004, 1e-6);
  EXPECT_GE(adam["test_accuracy"].get<double>(), 0.9);
  const json big = Train({"--optimizer", "adam", "--epochs", "1", "--batch", "256"});
  EXPECT_NEAR(big["lr"].get<double>(), 0.008, 1e-6);
  const json sgd = Train({"--optimizer", "sgd", "--epochs", "1", "--batch", "256"});
  EXPECT_EQ(sgd["optimizer"], "sgd");
  EXPECT_NEAR(sgd["lr"].get<double>(), 0.05, 1e-6);
}

TEST(StandaloneEvaluationFlags, AreCheckedAsMthubChecksThem) {
  for (const std::vector<std::string>& bad :
       std::vector<std::vector<std::string>>{{"--target-accuracy", "1.5"},
                                             {"--target-accuracy", "-0.1"},
                                             {"--patience", "-1"},
                                             {"--eval-every", "often"}}) {
    for (const char* program : {"worker/mtworker", "hub/mthub"}) {
      std::vector<std::string> argv = {test_support::BinaryPath(program)};
      if (std::string(program) == "worker/mtworker") argv.push_back("--standalone");
      argv.insert(argv.end(), bad.begin(), bad.end());
      const auto r = RunProcess(argv, 60);
      EXPECT_EQ(r.exit_code, 2) << program << " " << bad[0] << " " << bad[1] << "\n" << r.output;
      EXPECT_THAT(r.output, ::testing::HasSubstr(bad[0])) << program;
    }
  }
}

}  // namespace
}  // namespace mt
