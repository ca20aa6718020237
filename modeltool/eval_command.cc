#include "modeltool/eval_command.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <iostream>
#include <stdexcept>

#include "core/cli/command_line.h"
#include "core/cli/common_options.h"
#include "core/cli/validators.h"
#include "core/data/dataset.h"
#include "core/model/model_spec.h"
#include "core/train/evaluate.h"
#include "core/util/atomic_file.h"
#include "kernels/cpu/cpu_backend.h"
#include "model_io/model_file.h"

namespace mt {

CLI::App* AddEvalCommand(CLI::App& app, EvalOptions& options) {
  CLI::App* cmd = app.add_subcommand("eval", "test accuracy and loss of a model on a dataset");
  cli::Configure(*cmd, "mtmodel eval FILE --dataset D [--report R] [--batch B] [--threads N]");
  cmd->description(
      "Evaluates a model with weights (.onnx or .mtc) on the test split of a dataset, its "
      "inputs scaled as the model says (an .onnx file's mt.input_mean and mt.input_std; "
      "without them pixels to [-1, 1], as mt trains), and prints the result as JSON.");
  cmd->add_option("FILE", options.file, "the model: .onnx or .mtc")->required();
  cmd->add_option("--dataset", options.dataset,
                  "fashion-mnist, mnist, cifar10 (from /usr/share/datasets), a directory of "
                  "IDX or CIFAR-10 files, or an image folder (resized to the model's input)")
      ->type_name("NAME|DIR")
      ->required();
  cli::AddDataOptions(*cmd, options.data, /*training=*/false);
  cli::AddReport(*cmd, options.report);
  cmd->add_option("--batch", options.batch, "samples per forward pass")
      ->transform(cli::Integer(1, 65536));
  cli::AddThreads(*cmd, options.threads, "threads for the forward passes");
  cmd->set_help_flag("-h,--help", "this text");
  return cmd;
}

int RunEval(const EvalOptions& options) {
  const LoadedModel loaded = LoadModelFile(options.file);
  if (!loaded.weights)
    throw std::runtime_error(options.file +
                             " has no weights (a text spec or preset); eval needs an .onnx model "
                             "or an .mtc checkpoint");
  for (const std::string& warning : loaded.warnings) std::cerr << "warning: " << warning << "\n";
  kernels::CpuBackend cpu(static_cast<int>(options.threads));
  const std::unique_ptr<Model> model = BuildModel(loaded.spec, cpu);
  model->SetParams(loaded.weights->params.data());
  if (model->RunningStatCount()) model->SetRunningStats(loaded.weights->running_stats.data());
  model->Reserve(static_cast<int>(options.batch));
  DataOptions read = cli::ReadOptionsFor(options.dataset, options.data, loaded.spec);
  read.classes = model->num_classes();
  const auto test = LoadDataset(options.dataset, Split::kTest, read);
  const auto start = std::chrono::steady_clock::now();
  const EvalResult r = Evaluate(*model, *test);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  nlohmann::json j = {{"model", loaded.spec.name()}, {"file", options.file},
                      {"dataset", options.dataset},  {"split", "test"},
                      {"samples", r.samples},        {"test_accuracy", r.accuracy},
                      {"test_loss", r.mean_loss},    {"parameters", model->ParamCount()},
                      {"batch", options.batch},      {"threads", options.threads},
                      {"seconds", seconds}};
  const std::string text = j.dump(2) + "\n";
  std::cout << text;
  if (!options.report.empty()) WriteFileAtomically(options.report, text);
  return 0;
}

}  // namespace mt
