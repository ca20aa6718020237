// mtmodel as a user runs it: info, convert and eval on real files, their
// output and exit codes (0 done, 1 runtime failure, 2 bad command line).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/support/files.h"
#include "tests/support/subprocess.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using test_support::ReadAll;
using test_support::RunProcess;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kFashion = "/usr/share/datasets/fashion-mnist";

std::string Tool() { return test_support::BinaryPath("modeltool/mtmodel"); }

test_support::ProcessResult Mtmodel(std::vector<std::string> args, double timeout = 120) {
  args.insert(args.begin(), Tool());
  return RunProcess(args, timeout);
}

class MtModel : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test_support::FreshTempDir(
        std::string("mtmodel-") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST_F(MtModel, HelpAndUsageErrors) {
  auto r = Mtmodel({"--help"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("mtmodel info FILE"));
  r = Mtmodel({"convert", "--help"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--seed"));
  EXPECT_EQ(Mtmodel({}).exit_code, 2);
  EXPECT_EQ(Mtmodel({"frobnicate"}).exit_code, 2);
  EXPECT_EQ(Mtmodel({"info"}).exit_code, 2);
  r = Mtmodel({"eval", "lenet5"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--dataset"));
  r = Mtmodel({"convert", "lenet5", Path("x.onxx")});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("unknown extension"));
}

TEST_F(MtModel, InfoTableAndJson) {
  auto r = Mtmodel({"info", "lenet5"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("conv1"));
  EXPECT_THAT(r.output, HasSubstr("61706"));  // lenet5's parameters
  r = Mtmodel({"info", "lenet5", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["totals"]["params"], 61706);
  EXPECT_EQ(j["layers"].size(), 12u);
  EXPECT_EQ(j["layers"][0]["flops"], 2 * 6 * 28 * 28 * 25);
  EXPECT_EQ(j["layers"][3]["inputs"][0], "pool1");
}

TEST_F(MtModel, ConvertRoundTripsAndSaysWhatItDid) {
  auto r = Mtmodel({"convert", "lenet5", Path("a.onnx"), "--seed", "5"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("freshly initialised"));
  ASSERT_EQ(Mtmodel({"convert", Path("a.onnx"), Path("b.onnx")}).exit_code, 0);
  EXPECT_EQ(ReadAll(Path("a.onnx")), ReadAll(Path("b.onnx")));
  ASSERT_EQ(Mtmodel({"convert", Path("a.onnx"), Path("a.mtc")}).exit_code, 0);
  ASSERT_EQ(Mtmodel({"convert", Path("a.mtc"), Path("c.onnx")}).exit_code, 0);
  EXPECT_EQ(ReadAll(Path("a.onnx")), ReadAll(Path("c.onnx")));
  r = Mtmodel({"convert", Path("a.onnx"), Path("a.pbtxt")});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("not kept"));
  EXPECT_THAT(ReadAll(Path("a.pbtxt")), HasSubstr("name: \"fc3\""));
  r = Mtmodel({"info", Path("a.onnx")});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("with weights"));
}

TEST_F(MtModel, RuntimeFailuresExitOne) {
  auto r = Mtmodel({"info", Path("missing.onnx")});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("missing.onnx"));
  { std::ofstream(Path("junk.onnx")) << "not a model"; }
  r = Mtmodel({"convert", Path("junk.onnx"), Path("out.mtc")});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("not an ONNX model"));
  r = Mtmodel({"eval", "lenet5", "--dataset", kFashion});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("has no weights"));
  EXPECT_THAT(r.output, Not(HasSubstr("Sanitizer")));
}

TEST_F(MtModel, EvalReportsAccuracyAndLoss) {
  if (!fs::exists(kFashion)) GTEST_SKIP() << kFashion << " not installed";
  ASSERT_EQ(Mtmodel({"convert", "lenet5", Path("m.onnx")}).exit_code, 0);
  const auto r = Mtmodel({"eval", Path("m.onnx"), "--dataset", kFashion, "--report", Path("r.json"),
                          "--batch", "500", "--threads", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = test_support::ReadJson(Path("r.json"));
  EXPECT_EQ(j["samples"], 10000);
  EXPECT_GE(j["test_accuracy"].get<double>(), 0.0);
  EXPECT_LE(j["test_accuracy"].get<double>(), 1.0);
  EXPECT_GT(j["test_loss"].get<double>(), 0.0);
  EXPECT_EQ(j["model"], "lenet5");
  // A model for other data is refused.
  ASSERT_EQ(Mtmodel({"convert", "mentee", Path("cifar.onnx")}).exit_code, 0);
  const auto wrong = Mtmodel({"eval", Path("cifar.onnx"), "--dataset", kFashion});
  EXPECT_EQ(wrong.exit_code, 1) << wrong.output;
  EXPECT_THAT(wrong.output, HasSubstr("3x32x32"));
}

}  // namespace
}  // namespace mt
