// mtmodel: models as files. `info` shows a model's layers, `convert` moves
// it between ONNX, checkpoints and text specs, `eval` measures its test
// accuracy. Exit codes: 0 done, 1 runtime failure (a file that does not
// load, a model that does not fit the data), 2 bad command line.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>

#include "core/cli/command_line.h"
#include "core/cli/common_options.h"
#include "modeltool/convert_command.h"
#include "modeltool/eval_command.h"
#include "modeltool/info_command.h"
#include "modeltool/profile_command.h"

int main(int argc, char** argv) {
  CLI::App app("", "mtmodel");
  mt::cli::Configure(app,
                     "mtmodel info FILE [--json]\n"
                     "       mtmodel convert IN OUT [--seed N]\n"
                     "       mtmodel eval FILE --dataset D [--report R] [--batch B] [--threads N]\n"
                     "       mtmodel profile FILE [--batches 16,32,64,128] [--json FILE]");
  app.description(
      "Models as files: .onnx (ONNX), .mtc (mt checkpoints), text specs and presets. Commands: "
      "info (layers, shapes, parameters, FLOPs), convert (between the formats, by extension), "
      "eval (test accuracy and loss on a dataset), profile (time and memory per batch size). "
      "`mtmodel COMMAND --help` for each.");
  mt::cli::AddVersionAndHelp(app, "mtmodel");
  app.require_subcommand(1, 1);
  mt::InfoOptions info;
  mt::ConvertOptions convert;
  mt::EvalOptions eval;
  CLI::App* info_cmd = mt::AddInfoCommand(app, info);
  CLI::App* convert_cmd = mt::AddConvertCommand(app, convert);
  CLI::App* eval_cmd = mt::AddEvalCommand(app, eval);
  mt::ProfileOptions profile;
  const mt::ProfileCommands profile_cmds = mt::AddProfileCommands(app, profile);
  if (const std::optional<int> exit_code = mt::cli::Parse(app, argc, argv, nullptr))
    return *exit_code;

  try {
    if (info_cmd->parsed()) return mt::RunInfo(info);
    if (convert_cmd->parsed()) return mt::RunConvert(convert);
    if (eval_cmd->parsed()) return mt::RunEval(eval);
    if (profile_cmds.profile->parsed()) return mt::RunProfile(profile);
    if (profile_cmds.measure->parsed()) return mt::RunMeasureBatch(profile);
    return mt::cli::kUsageExitCode;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mtmodel: %s\n", e.what());
    return 1;
  }
}
