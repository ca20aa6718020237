// mtworker --standalone as a user runs it: real process, real files.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/support/files.h"
#include "tests/support/subprocess.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using test_support::RunProcess;

const std::string kFashion = "/usr/share/datasets/fashion-mnist";

std::string Worker() { return test_support::BinaryPath("worker/mtworker"); }

void ExpectFailure(const std::vector<std::string>& args, int code, const std::string& needle) {
  std::vector<std::string> argv = {Worker()};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto r = RunProcess(argv, 60);
  EXPECT_EQ(r.exit_code, code) << r.output;
  EXPECT_NE(r.output.find(needle), std::string::npos) << "expected '" << needle << "' in:\n" << r.output;
  EXPECT_EQ(r.output.find("Sanitizer"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("terminate called"), std::string::npos) << r.output;
}

TEST(StandaloneCli, HelpListsTheFlags) {
  const auto r = RunProcess({Worker(), "--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* flag : {"--standalone", "--model", "--dataset", "--batch", "--epochs", "--lr", "--momentum",
                           "--threads", "--checkpoint-dir", "--resume", "--report"})
    EXPECT_NE(r.output.find(flag), std::string::npos) << flag;
}

TEST(StandaloneCli, BadFlagsGiveOneClearMessage) {
  ExpectFailure({"--standalone", "--batch", "zero"}, 2, "--batch");
  ExpectFailure({"--standalone", "--batch", "0"}, 2, "--batch");
  ExpectFailure({"--standalone", "--lr", "-1"}, 2, "--lr");
  ExpectFailure({"--standalone", "--frobnicate"}, 2, "--frobnicate");
  ExpectFailure({"--standalone", "--optimizer", "rmsprop"}, 2, "--optimizer");
  ExpectFailure({"--standalone", "--epochs"}, 2, "--epochs");
  ExpectFailure({"--standalone", "--resume"}, 2, "--checkpoint-dir");
}

TEST(StandaloneCli, BadModelAndDataNameTheFile) {
  const fs::path dir = test_support::FreshTempDir("cli-bad");
  ExpectFailure({"--standalone", "--model", "lenet7"}, 1, "lenet7");
  std::ofstream(dir / "bad.model") << "input { channels: 1 height: 28 width: 28 }\nlayer { conv { kernal: 3 } }\n";
  ExpectFailure({"--standalone", "--model", (dir / "bad.model").string()}, 1, "bad.model");
  ExpectFailure({"--standalone", "--dataset", (dir / "nothing-here").string()}, 1, "nothing-here");
  fs::create_directories(dir / "corrupt");
  std::ofstream(dir / "corrupt" / "train-images-idx3-ubyte") << "garbage";
  std::ofstream(dir / "corrupt" / "train-labels-idx1-ubyte") << "garbage";
  std::ofstream(dir / "corrupt" / "t10k-images-idx3-ubyte") << "garbage";
  std::ofstream(dir / "corrupt" / "t10k-labels-idx1-ubyte") << "garbage";
  ExpectFailure({"--standalone", "--dataset", (dir / "corrupt").string()}, 1, "train-images-idx3-ubyte");
  // A model whose input does not match the data.
  ExpectFailure({"--standalone", "--model", "mentee", "--dataset", kFashion}, 1, "3x32x32");
  std::ofstream(dir / "file") << "x";
  ExpectFailure({"--standalone", "--checkpoint-dir", (dir / "file" / "ck").string()}, 1, "--checkpoint-dir");
  fs::remove_all(dir);
}

TEST(StandaloneCli, TrainsReportsAndResumes) {
  if (!fs::exists(kFashion)) GTEST_SKIP() << kFashion << " not installed (deploy/install-deps.sh installs it)";
  const fs::path dir = test_support::FreshTempDir("cli-train");
  const auto first = RunProcess({Worker(), "--standalone", "--steps", "60", "--checkpoint-dir",
                                 (dir / "ck").string(), "--checkpoint-every", "30", "--report",
                                 (dir / "a.json").string(), "--threads", "2"},
                                300);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const std::string a = test_support::ReadAll(dir / "a.json");
  for (const char* key : {"test_accuracy", "train_loss", "last_step_loss", "steps", "samples", "train_seconds", "samples_per_second",
                          "peak_rss_bytes"})
    EXPECT_FALSE(std::isnan(test_support::JsonNumber(a, key))) << key << " missing in " << a;
  EXPECT_EQ(test_support::JsonNumber(a, "steps"), 60);
  EXPECT_EQ(test_support::JsonNumber(a, "samples"), 60 * 64);
  // 60 steps of LeNet-5 already beat chance (0.1) by far.
  EXPECT_GT(test_support::JsonNumber(a, "test_accuracy"), 0.5) << a;

  const auto second = RunProcess({Worker(), "--standalone", "--steps", "90", "--checkpoint-dir",
                                  (dir / "ck").string(), "--resume", "--report", (dir / "b.json").string()},
                                 300);
  ASSERT_EQ(second.exit_code, 0) << second.output;
  const std::string b = test_support::ReadAll(dir / "b.json");
  EXPECT_EQ(test_support::JsonNumber(b, "resumed_from_step"), 60) << b;
  EXPECT_EQ(test_support::JsonNumber(b, "steps"), 90) << b;
  EXPECT_EQ(test_support::JsonNumber(b, "samples"), 30 * 64) << b;
  fs::remove_all(dir);
}

// ocl-icd reads the installed platforms from OCL_ICD_VENDORS: pointing it at
// an empty directory gives a machine with no OpenCL platform at all.
std::vector<std::string> WithoutOpenCl(const fs::path& empty_dir, std::vector<std::string> args) {
  fs::create_directories(empty_dir);
  std::vector<std::string> argv = {"/usr/bin/env", "OCL_ICD_VENDORS=" + empty_dir.string(), Worker()};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

TEST(StandaloneCli, DeviceOpenClWithoutAPlatformFailsClearlyAndAutoFallsBackToTheCpu) {
  const fs::path dir = test_support::FreshTempDir("cli-noopencl");
  const auto opencl = RunProcess(WithoutOpenCl(dir / "vendors", {"--standalone", "--device", "opencl"}), 60);
  EXPECT_EQ(opencl.exit_code, 1) << opencl.output;
  EXPECT_NE(opencl.output.find("--device opencl"), std::string::npos) << opencl.output;
  EXPECT_NE(opencl.output.find("OpenCL"), std::string::npos) << opencl.output;
  EXPECT_EQ(opencl.output.find("terminate called"), std::string::npos) << opencl.output;
  ExpectFailure({"--standalone", "--device", "gpu"}, 2, "--device");

  if (!fs::exists(kFashion)) GTEST_SKIP() << kFashion << " not installed (deploy/install-deps.sh installs it)";
  const auto autod = RunProcess(
      WithoutOpenCl(dir / "vendors", {"--standalone", "--device", "auto", "--steps", "5", "--report",
                                      (dir / "auto.json").string()}),
      120);
  ASSERT_EQ(autod.exit_code, 0) << autod.output;
  const std::string report = test_support::ReadAll(dir / "auto.json");
  EXPECT_NE(report.find("\"device\": \"cpu\""), std::string::npos) << report;
  EXPECT_NE(report.find("conv1:cpu"), std::string::npos) << report;
  fs::remove_all(dir);
}

TEST(StandaloneCli, DeviceOpenClTrainsWithEveryLayerOnOpenCl) {
  if (!fs::exists(kFashion)) GTEST_SKIP() << kFashion << " not installed (deploy/install-deps.sh installs it)";
  const fs::path dir = test_support::FreshTempDir("cli-opencl");
  const auto r = RunProcess({Worker(), "--standalone", "--device", "opencl", "--steps", "60", "--report",
                             (dir / "cl.json").string()},
                            300);
  if (r.exit_code != 0 && (r.output.find("no OpenCL platform") != std::string::npos ||
                           r.output.find("built without OpenCL") != std::string::npos))
    GTEST_SKIP() << "no OpenCL platform on this machine";
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string report = test_support::ReadAll(dir / "cl.json");
  EXPECT_NE(report.find("\"device\": \"opencl\""), std::string::npos) << report;
  EXPECT_NE(report.find("conv1:opencl"), std::string::npos) << report;
  EXPECT_NE(report.find("fc3:opencl"), std::string::npos) << report;
  // The CPU reaches 0.66 after these 60 steps; a broken op stays near 0.1.
  EXPECT_GT(test_support::JsonNumber(report, "test_accuracy"), 0.55) << report;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mt
