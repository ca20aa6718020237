// mtmodel's command line as a user meets it: a mistyped command or flag is
// named with the one it was probably meant to be (exit 2), and --help fits
// a terminal of 80 columns.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/model/model_spec.h"
#include "model_io/onnx_export.h"
#include "tests/modeltool/model_io_fixtures.h"
#include "tests/support/console_text.h"
#include "tests/support/subprocess.h"

namespace mt {
namespace {

using ::testing::HasSubstr;

test_support::ProcessResult Mtmodel(std::vector<std::string> args) {
  args.insert(args.begin(), test_support::BinaryPath("modeltool/mtmodel"));
  return test_support::RunProcess(args, 60);
}

TEST(MtModelCli, ATypoGetsTheNearestCommandOrFlag) {
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"infoo", "lenet5"}, "unknown command infoo; did you mean info?"},
      {{"covnert", "lenet5", "x.onnx"}, "unknown command covnert; did you mean convert?"},
      {{"info", "lenet5", "--jsn"}, "unknown option --jsn; did you mean --json?"},
      // Before "--dataset is required": the typo is why it is missing.
      {{"eval", "lenet5", "--datset", "fashion-mnist"},
       "unknown option --datset; did you mean --dataset?"},
      {{"frobnicate"}, "unknown command frobnicate (see mtmodel --help)"},
      {{}, "a command is required: info, convert, eval, profile"},
  };
  for (const Case& c : cases) {
    const auto r = Mtmodel(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.says << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr(c.says));
  }
}

TEST(MtModelCli, HelpFitsEightyColumns) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"--help"},
                                             {"info", "--help"},
                                             {"convert", "--help"},
                                             {"eval", "--help"},
                                             {"profile", "--help"}}) {
    const auto r = Mtmodel(args);
    EXPECT_EQ(r.exit_code, 0) << args[0] << "\n" << r.output;
    EXPECT_EQ(test_support::LinesWiderThan(r.output, 80), "") << args[0];
  }
  EXPECT_THAT(test_support::OneLine(Mtmodel({"eval", "--help"}).output),
              HasSubstr("--batch N samples per forward pass [1 to 65536; default 256]"));
}

// A user's own normalisation written in a form mt does not read stops
// every command that opens the file, naming the key and the value; eval
// used to ignore it and scale inputs its own way.
TEST(MtModelCli, ScalingMetadataItCannotReadStopsInfoAndEvalNamingIt) {
  const std::filesystem::path dir =
      ::testing::TempDir() + "/mtmodel-scaling-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  const proto::ModelSpec spec = LoadModelSpec("lenet5");
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(ExportOnnxBytes(spec, test_support::RandomWeights(spec, 1))));
  for (auto& p : *m.mutable_metadata_props())
    if (p.key() == "mt.input_mean") p.set_value("0.2 0.3");
  const std::string file = (dir / "spaced.onnx").string();
  std::ofstream(file, std::ios::binary) << m.SerializeAsString();
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"info", file}, {"eval", file, "--dataset", "fashion-mnist"}}) {
    const auto r = Mtmodel(args);
    EXPECT_EQ(r.exit_code, 1) << args[0] << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr("metadata mt.input_mean '0.2 0.3' is not a number")) << args[0];
  }
  std::filesystem::remove_all(dir);
  const std::string help = test_support::OneLine(Mtmodel({"eval", "--help"}).output);
  EXPECT_THAT(help, HasSubstr("mt.input_mean"));
  EXPECT_THAT(help, ::testing::Not(HasSubstr("fixed")));
}

}  // namespace
}  // namespace mt
