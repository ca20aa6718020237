// mtmodel's command line as a user meets it: a mistyped command or flag is
// named with the one it was probably meant to be (exit 2), and --help fits
// a terminal of 80 columns.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

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

}  // namespace
}  // namespace mt
