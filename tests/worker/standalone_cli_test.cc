// mtworker --standalone as a user runs it: real process, real files; exit
// codes, the report's fields, and the errors a user reads.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/checkpoint/checkpoint.h"
#include "core/util/build_target.h"
#include "tests/support/files.h"
#include "tests/support/history_check.h"
#include "tests/support/idx_writer.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_backends.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test_support::PlacementOf;
using test_support::ReadJson;
using test_support::RunProcess;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kFashion = "/usr/share/datasets/fashion-mnist";

std::string Worker() { return test_support::BinaryPath("worker/mtworker"); }

void ExpectFailure(const std::vector<std::string>& args, int code, const std::string& needle) {
  std::vector<std::string> argv = {Worker()};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto r = RunProcess(argv, 60);
  EXPECT_EQ(r.exit_code, code) << r.output;
  EXPECT_THAT(r.output, HasSubstr(needle));
  // A sanitizer's report exits 1 as well, like a refused run; only its
  // words tell them apart (in a -DMT_SANITIZE=ON build).
  EXPECT_THAT(r.output, Not(HasSubstr("Sanitizer")));
}

TEST(StandaloneCli, HelpListsTheFlags) {
  const auto r = RunProcess({Worker(), "--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* flag : {"--standalone", "--model", "--dataset", "--batch", "--epochs", "--lr",
                           "--momentum", "--threads", "--checkpoint-dir", "--resume", "--report",
                           "--eval-every", "--target-accuracy", "--patience"})
    EXPECT_THAT(r.output, HasSubstr(flag));
}

TEST(StandaloneCli, BadFlagsGiveOneClearMessage) {
  ExpectFailure({"--standalone", "--batch", "zero"}, 2, "--batch");
  ExpectFailure({"--standalone", "--batch", "0"}, 2, "--batch");
  ExpectFailure({"--standalone", "--lr", "-1"}, 2, "--lr");
  ExpectFailure({"--standalone", "--frobnicate"}, 2, "--frobnicate");
  ExpectFailure({"--standalone", "--optimizer", "rmsprop"}, 2, "--optimizer");
  ExpectFailure({"--standalone", "--epochs"}, 2, "--epochs");
  ExpectFailure({"--standalone", "--resume"}, 2, "--checkpoint-dir");
  // Issue 44: the PyTorch habit trained Adam at SGD's rate with the
  // momentum silently ignored, and ended at chance with exit 0.
  ExpectFailure({"--standalone", "--lr", "0.05", "--momentum", "0.9"}, 2, "--optimizer sgd");
  ExpectFailure({"--standalone", "--optimizer", "adam", "--momentum", "0.9"}, 2, "--optimizer sgd");
}

TEST(StandaloneCli, BadModelAndDataNameTheFile) {
  const fs::path dir = test_support::FreshTempDir("cli-bad");
  ExpectFailure({"--standalone", "--model", "lenet7"}, 1, "lenet7");
  std::ofstream(dir / "bad.model")
      << "input { channels: 1 height: 28 width: 28 }\nlayer { conv { kernal: 3 } }\n";
  ExpectFailure({"--standalone", "--model", (dir / "bad.model").string()}, 1, "bad.model");
  ExpectFailure({"--standalone", "--dataset", (dir / "nothing-here").string()}, 1, "nothing-here");
  fs::create_directories(dir / "corrupt");
  std::ofstream(dir / "corrupt" / "train-images-idx3-ubyte") << "garbage";
  std::ofstream(dir / "corrupt" / "train-labels-idx1-ubyte") << "garbage";
  std::ofstream(dir / "corrupt" / "t10k-images-idx3-ubyte") << "garbage";
  std::ofstream(dir / "corrupt" / "t10k-labels-idx1-ubyte") << "garbage";
  ExpectFailure({"--standalone", "--dataset", (dir / "corrupt").string()}, 1,
                "train-images-idx3-ubyte");
  // A model whose input does not match the data.
  ExpectFailure({"--standalone", "--model", "mentee", "--dataset", kFashion}, 1, "3x32x32");
  std::ofstream(dir / "file") << "x";
  ExpectFailure({"--standalone", "--checkpoint-dir", (dir / "file" / "ck").string()}, 1,
                "--checkpoint-dir");
  fs::remove_all(dir);
}

TEST(StandaloneCli, TrainsReportsAndResumes) {
  if (!fs::exists(kFashion))
    GTEST_SKIP() << kFashion << " not installed (deploy/install-deps.sh installs it)";
  const fs::path dir = test_support::FreshTempDir("cli-train");
  const auto first = RunProcess({Worker(), "--standalone", "--steps", "60", "--checkpoint-dir",
                                 (dir / "ck").string(), "--checkpoint-every", "30", "--report",
                                 (dir / "a.json").string(), "--threads", "2"},
                                300);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const json a = ReadJson(dir / "a.json");
  for (const char* key : {"test_accuracy", "train_loss", "last_step_loss", "steps", "samples",
                          "train_seconds", "samples_per_second", "peak_rss_bytes"})
    EXPECT_TRUE(a.contains(key) && a.at(key).is_number()) << key << " missing in " << a.dump(2);
  EXPECT_EQ(a.value("mode", ""), "standalone");
  EXPECT_EQ(a.value("arch", ""), kBuildArch);
  EXPECT_EQ(a.value("simd", ""), kBuildSimd);
  EXPECT_EQ(a.value("steps", int64_t{0}), 60);
  EXPECT_EQ(a.value("samples", int64_t{0}), 60 * 64);
  EXPECT_EQ(a.value("resumed_from_step", int64_t{0}), -1);
  // 60 steps of LeNet-5 already beat chance (0.1) by far.
  EXPECT_GT(a.value("test_accuracy", -1.0), 0.5) << a.dump(2);
  test_support::ExpectHistoryCovers(a, 1, 60);

  const auto second =
      RunProcess({Worker(), "--standalone", "--steps", "90", "--checkpoint-dir",
                  (dir / "ck").string(), "--resume", "--report", (dir / "b.json").string()},
                 300);
  ASSERT_EQ(second.exit_code, 0) << second.output;
  const json b = ReadJson(dir / "b.json");
  EXPECT_EQ(b.value("resumed_from_step", int64_t{0}), 60) << b.dump(2);
  EXPECT_EQ(b.value("steps", int64_t{0}), 90) << b.dump(2);
  EXPECT_EQ(b.value("samples", int64_t{0}), 30 * 64) << b.dump(2);
  test_support::ExpectHistoryCovers(b, 61, 90);
  fs::remove_all(dir);
}

TEST(StandaloneCli, AModelAtChanceEndsTheRunWithExitOne) {
  // As mthub does: a run that learned nothing is no result (issue 44).
  const fs::path dir = test_support::FreshTempDir("cli-chance");
  test_support::WriteNoiseIdxDataset(dir.string(), 640, 500, 5);
  const auto r = RunProcess({Worker(), "--standalone", "--dataset", dir.string(), "--batch", "32",
                             "--steps", "20", "--report", (dir / "r.json").string(), "--export",
                             (dir / "final.mtc").string()},
                            120);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const json report = ReadJson(dir / "r.json");
  EXPECT_THAT(report.value("stop_reason", ""), HasSubstr("at chance")) << report.dump(2);
  EXPECT_FALSE(fs::exists(dir / "final.mtc")) << "no model file passes for a result";
  fs::remove_all(dir);
}

TEST(StandaloneCli, ResumeRefusesACheckpointWhoseOptimizerSettingsAreOutOfRange) {
  // Issue 45: a checkpoint with a valid checksum and lr NaN or 1e30, or
  // momentum 2, was resumed.
  const fs::path dir = test_support::FreshTempDir("cli-resume-optim");
  test_support::WriteIdxDataset(dir.string(), 640, 200, 3);
  const std::string ck = (dir / "ck").string();
  RunProcess({Worker(), "--standalone", "--dataset", dir.string(), "--optimizer", "sgd", "--steps",
              "3", "--checkpoint-dir", ck, "--checkpoint-every", "1"},
             120);
  const ResumePoint written = NewestValidCheckpoint(ck);
  ASSERT_NE(written.path, "");
  for (const auto& entry : fs::directory_iterator(ck))
    if (entry.path() != written.path) fs::remove(entry.path());
  // Resumed at its own step, a run has nothing left to train: only the
  // check on the checkpoint stands between it and exit 0.
  const std::string steps = std::to_string(written.checkpoint.step);
  for (int bad = 0; bad < 3; ++bad) {
    Checkpoint c = written.checkpoint;
    if (bad == 0) c.optimizer.config.lr = std::nanf("");
    if (bad == 1) c.optimizer.config.lr = 1e30f;
    if (bad == 2) c.optimizer.config.momentum = 2;
    SaveCheckpoint(written.path, c);
    const auto r = RunProcess({Worker(), "--standalone", "--dataset", dir.string(), "--optimizer",
                               "sgd", "--steps", steps, "--checkpoint-dir", ck, "--resume"},
                              120);
    EXPECT_EQ(r.exit_code, 1) << bad << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr(written.path)) << bad;
    EXPECT_THAT(r.output, HasSubstr(bad == 2 ? "momentum" : "lr")) << bad;
  }
  // The same checkpoint as written resumes.
  SaveCheckpoint(written.path, written.checkpoint);
  const auto ok = RunProcess({Worker(), "--standalone", "--dataset", dir.string(), "--optimizer",
                              "sgd", "--steps", steps, "--checkpoint-dir", ck, "--resume",
                              "--report", (dir / "ok.json").string()},
                             120);
  EXPECT_EQ(ReadJson(dir / "ok.json").value("resumed_from_step", int64_t{-1}),
            written.checkpoint.step)
      << ok.output;
  fs::remove_all(dir);
}

// ocl-icd reads the installed platforms from OCL_ICD_VENDORS: pointing it at
// an empty directory gives a machine with no OpenCL platform at all.
std::vector<std::string> WithoutOpenCl(const fs::path& empty_dir, std::vector<std::string> args) {
  fs::create_directories(empty_dir);
  std::vector<std::string> argv = {"/usr/bin/env", "OCL_ICD_VENDORS=" + empty_dir.string(),
                                   Worker()};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

TEST(StandaloneCli, DeviceOpenClWithoutAPlatformFailsClearlyAndAutoFallsBackToTheCpu) {
  const fs::path dir = test_support::FreshTempDir("cli-noopencl");
  const auto opencl =
      RunProcess(WithoutOpenCl(dir / "vendors", {"--standalone", "--device", "opencl"}), 60);
  EXPECT_EQ(opencl.exit_code, 1) << opencl.output;
  EXPECT_THAT(opencl.output, HasSubstr("--device opencl"));
  ExpectFailure({"--standalone", "--device", "gpu"}, 2, "--device");

  if (!fs::exists(kFashion))
    GTEST_SKIP() << kFashion << " not installed (deploy/install-deps.sh installs it)";
  const auto autod =
      RunProcess(WithoutOpenCl(dir / "vendors", {"--standalone", "--device", "auto", "--steps", "5",
                                                 "--report", (dir / "auto.json").string()}),
                 120);
  ASSERT_EQ(autod.exit_code, 0) << autod.output;
  const json report = ReadJson(dir / "auto.json");
  EXPECT_EQ(report.value("device", ""), "cpu") << report.dump(2);
  const auto placement = PlacementOf(report.value("placement", ""));
  EXPECT_EQ(placement.size(), 12u) << report.dump(2);  // LeNet-5's layers
  for (const auto& [layer, where] : placement) EXPECT_EQ(where, "cpu") << layer;
  fs::remove_all(dir);
}

TEST(StandaloneCli, DeviceOpenClTrainsWithEveryLayerOnOpenCl) {
  if (!fs::exists(kFashion))
    GTEST_SKIP() << kFashion << " not installed (deploy/install-deps.sh installs it)";
  if (!test_support::HaveOpenCl()) GTEST_SKIP() << test_support::kNoOpenCl;
  const fs::path dir = test_support::FreshTempDir("cli-opencl");
  const auto r = RunProcess({Worker(), "--standalone", "--device", "opencl", "--steps", "60",
                             "--report", (dir / "cl.json").string()},
                            300);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json report = ReadJson(dir / "cl.json");
  EXPECT_EQ(report.value("device", ""), "opencl") << report.dump(2);
  const auto placement = PlacementOf(report.value("placement", ""));
  EXPECT_EQ(placement.size(), 12u)
      << report.dump(2);  // LeNet-5's layers, and no loss moved to the CPU
  for (const auto& [layer, where] : placement) EXPECT_EQ(where, "opencl") << layer;
  // The CPU reaches 0.66 after these 60 steps; a broken op stays near 0.1.
  EXPECT_GT(report.value("test_accuracy", -1.0), 0.55) << report.dump(2);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mt
