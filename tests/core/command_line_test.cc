// The daemons' command-line conventions (core/cli) on a small CLI11 app:
// the "did you mean" for typos and --help in words at 80 columns.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/cli/command_line.h"
#include "core/cli/help_formatter.h"
#include "core/cli/suggestion.h"
#include "core/cli/validators.h"
#include "tests/support/console_text.h"

namespace mt::cli {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(EditDistance, CountsInsertionsDeletionsReplacementsAndSwaps) {
  EXPECT_EQ(EditDistance("", ""), 0u);
  EXPECT_EQ(EditDistance("info", "info"), 0u);
  EXPECT_EQ(EditDistance("infoo", "info"), 1u);           // an insertion
  EXPECT_EQ(EditDistance("--wrkers", "--workers"), 1u);   // a deletion
  EXPECT_EQ(EditDistance("--workres", "--workers"), 1u);  // two letters swapped
  EXPECT_EQ(EditDistance("--port", "--part"), 1u);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
  EXPECT_EQ(EditDistance("abc", ""), 3u);
}

TEST(Nearest, SuggestsOnlyWhatIsNearEnoughToBeATypo) {
  const std::vector<std::string> flags = {"--workers", "--port", "--seed", "--sync-every", "-h"};
  EXPECT_EQ(Nearest("--workres", flags), "--workers");
  EXPECT_EQ(Nearest("-workers", flags), "--workers");
  EXPECT_EQ(Nearest("--sync-evry", flags), "--sync-every");
  EXPECT_EQ(Nearest("--sede", flags), "--seed");
  // A third of the letters at most: "--prt" is one edit from --port, "--xyz"
  // three from everything.
  EXPECT_EQ(Nearest("--prt", flags), "--port");
  EXPECT_EQ(Nearest("--xyz", flags), std::nullopt);
  EXPECT_EQ(Nearest("--frobnicate", flags), std::nullopt);
  // One letter is near every short flag: no guess.
  EXPECT_EQ(Nearest("-x", flags), std::nullopt);
  // A known name is not a typo of itself.
  EXPECT_EQ(Nearest("--port", {"--port"}), std::nullopt);
}

// An app like mtmodel's: two commands and a hidden one, options on both levels.
struct ToolApp {
  ToolApp() {
    Configure(app, "tool info FILE");
    app.require_subcommand(1, 1);
    CLI::App* info = app.add_subcommand("info", "show a model");
    info->add_option("file", file)->required();
    info->add_flag("--json", json, "as JSON");
    CLI::App* convert = app.add_subcommand("convert", "convert a model");
    convert->add_option("in", file)->required();
    app.add_subcommand("measure-batch", "")->group("");
  }
  std::string Error(std::vector<std::string> args) {
    args.insert(args.begin(), "tool");
    std::vector<const char*> argv;
    for (const std::string& a : args) argv.push_back(a.c_str());
    try {
      app.parse(static_cast<int>(argv.size()), argv.data());
    } catch (const CLI::ParseError& e) {
      return DescribeParseError(app, e);
    }
    return "parsed";
  }
  CLI::App app{"", "tool"};
  std::string file;
  bool json = false;
};

TEST(DescribeParseError, NamesTheUnknownCommandAndTheNearOne) {
  EXPECT_EQ(ToolApp().Error({"infoo", "m"}), "unknown command infoo; did you mean info?");
  EXPECT_EQ(ToolApp().Error({"frobnicate"}), "unknown command frobnicate");
  // The hidden command is neither listed nor guessed.
  EXPECT_EQ(ToolApp().Error({}), "a command is required: info, convert");
  EXPECT_EQ(ToolApp().Error({"measure-batc"}), "unknown command measure-batc");
  EXPECT_EQ(ToolApp().Error({"info", "m"}), "parsed");
}

TEST(DescribeParseError, NamesTheUnknownOptionAndTheNearOne) {
  // The command's own options count once it is given.
  EXPECT_EQ(ToolApp().Error({"info", "m", "--jsn"}), "unknown option --jsn; did you mean --json?");
  EXPECT_EQ(ToolApp().Error({"info", "m", "--jsn=1"}),
            "unknown option --jsn; did you mean --json?");
  EXPECT_EQ(ToolApp().Error({"info", "m", "--frobnicate"}), "unknown option --frobnicate");
  // A typo that leaves a required value missing is reported as the typo.
  EXPECT_EQ(ToolApp().Error({"info", "--hlep"}), "unknown option --hlep; did you mean --help?");
  // Other mistakes keep CLI11's words.
  EXPECT_THAT(ToolApp().Error({"info"}), HasSubstr("file is required"));
  EXPECT_THAT(ToolApp().Error({"info", "m", "extra"}), HasSubstr("not expected: extra"));
}

TEST(DescribeParseError, ParseExitsTwoWithTheSuggestion) {
  CLI::App app{"", "daemon"};
  Configure(app, "daemon --workers N");
  int workers = 1;
  app.add_option("--workers", workers, "workers")->transform(Integer(1, 4096));
  const char* argv[] = {"daemon", "--workres", "3"};
  testing::internal::CaptureStderr();
  EXPECT_EQ(Parse(app, 3, argv, nullptr), kUsageExitCode);
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "daemon: unknown option --workres; did you mean --workers? (see daemon --help)\n");
}

TEST(HelpFormatter, RangesInWordsWithinEightyColumns) {
  CLI::App app{"", "daemon"};
  Configure(app,
            "daemon --workers N [--port 50051] [--model lenet5|FILE] [--dataset NAME|DIR] "
            "[--learning-rate X] ...");
  app.description(
      "daemon coordinates synchronous data-parallel training: workers join, compute gradients "
      "on their shares of each step's batch, and the hub averages them.");
  Section(app, "Cluster");
  int workers = 1, checkpoint = 100, sync = 0;
  double momentum = 0.9;
  app.add_option("--workers", workers, "workers to wait for before training starts")
      ->transform(Integer(1, 4096));
  app.add_option("--checkpoint-every", checkpoint, "steps between checkpoints")
      ->transform(Integer(0));
  app.add_option("--sync-every", sync, "local steps")
      ->type_name("H|auto")
      ->transform(IntegerOr("auto", 0, 1, 64))
      ->default_str("auto");
  app.add_option("--momentum", momentum, "momentum of SGD")->check(Real(0, 0.9999));
  const std::string help = app.help();
  EXPECT_EQ(test_support::LinesWiderThan(help, 80), "") << help;
  const std::string flat = test_support::OneLine(help);
  EXPECT_THAT(flat, HasSubstr("--workers N workers to wait for before training starts "
                              "[1 to 4096; default 1]"));
  EXPECT_THAT(flat, HasSubstr("--checkpoint-every N steps between checkpoints "
                              "[0 or more; default 100]"));
  EXPECT_THAT(flat, HasSubstr("--sync-every H|auto local steps [auto or 1 to 64; default auto]"));
  EXPECT_THAT(flat, HasSubstr("--momentum X momentum of SGD [0 to 0.9999; default 0.9]"));
  EXPECT_THAT(help, Not(ContainsRegex("[0-9]\\.\\.[0-9]")));
  EXPECT_THAT(help, Not(HasSubstr("INT")));
  // The bracketed synopsis items are not broken across lines.
  EXPECT_THAT(help, Not(HasSubstr("[--dataset\n")));
  EXPECT_THAT(help, Not(HasSubstr("[--learning-rate\n")));
}

TEST(HelpFormatter, SynopsisLinesWrapUnderTheirFirstFlag) {
  CLI::App app{"", "tool"};
  Configure(app,
            "tool info FILE [--json] [--layers] [--shapes] [--parameters] [--flops] [--memory]\n"
            "\n"
            "       tool eval FILE --dataset D");
  const std::string help = app.help();
  EXPECT_EQ(test_support::LinesWiderThan(help, 80), "") << help;
  EXPECT_THAT(help, HasSubstr("usage: tool info FILE [--json]"));
  EXPECT_THAT(help, HasSubstr("\n            [--memory]\n"));  // under "info"
  EXPECT_THAT(help, HasSubstr("\n       tool eval FILE --dataset D\n"));
}

}  // namespace
}  // namespace mt::cli
