#include "core/cli/common_options.h"

#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <thread>

#include "core/cli/choice_option.h"
#include "core/cli/command_line.h"
#include "core/cli/validators.h"
#include "core/cli/version.h"
#include "core/data/dataset_notes.h"
#include "core/model/model_spec.h"

namespace mt::cli {

void AddModelAndDataset(CLI::App& app, std::string& model, std::string& dataset,
                        const std::string& dataset_note) {
  app.add_option("--model", model,
                 "preset (lenet5, mentee, mobilenet-tiny), text-format model spec file, ONNX model "
                 "(.onnx: its weights are the start) or mt checkpoint (.mtc)")
      ->type_name("NAME|FILE");
  app.add_option("--dataset", dataset,
                 "fashion-mnist, mnist, cifar10 (from /usr/share/datasets), a directory of IDX "
                 "or CIFAR-10 files, or an image folder (DIR/<class>/*.png|jpg, or "
                 "DIR/train/<class>/... and DIR/test/<class>/...; resized to the model's input)" +
                     dataset_note)
      ->type_name("NAME|DIR");
}

void AddDataOptions(CLI::App& app, DataSettings& data, bool training) {
  app.add_option("--test-fraction", data.test_fraction,
                 "image folders without a test/ folder: hold out this share of each class for "
                 "testing, chosen by file path (default: 0.1)")
      ->check(Real(0, 0.95))
      ->default_str("");
  app.add_flag("--skip-bad-images", data.skip_bad_images,
               "leave out image files that do not decode (truncated, not PNG or JPEG, under 8 "
               "pixels a side, over 64 megapixels) and count them, rather than stop at the first");
  if (!training) return;
  app.add_option_function<std::string>(
         "--augment", [&data](const std::string& text) { data.augment = ParseAugment(text); },
         "training samples only: random shift within a black border of an eighth of the side "
         "(crop) and left-right mirror (flip); auto: both for image folders, none for IDX and "
         "CIFAR-10 files")
      ->check(ParsedBy([](const std::string& text) { ParseAugment(text); }))
      ->type_name("auto|none|flip|crop|flip,crop")
      ->default_str("auto");
}

DataOptions ReadOptionsFor(const std::string& dataset, const DataSettings& settings,
                           const proto::ModelSpec& model) {
  DataOptions read = ReadOptions(settings, SpecInputShape(model), SpecPixelScaling(model));
  read.class_names.assign(model.class_names().begin(), model.class_names().end());
  read.progress = DecodeProgressLog(dataset);
  return read;
}

DatasetInfo PeekTrainingSet(const std::string& dataset, const DataSettings& settings,
                            const proto::ModelSpec& model, DataOptions* read) {
  *read = ReadOptionsFor(dataset, settings, model);
  DatasetInfo train = PeekDataset(dataset, Split::kTrain, *read);
  for (const std::string& note : DatasetNotes(dataset, train)) spdlog::warn("{}", note);
  return train;
}

std::function<void(size_t, size_t)> DecodeProgressLog(const std::string& dataset) {
  auto last =
      std::make_shared<std::chrono::steady_clock::time_point>(std::chrono::steady_clock::now());
  return [dataset, last](size_t done, size_t total) {
    const auto now = std::chrono::steady_clock::now();
    if (done < total && now - *last < std::chrono::seconds(3)) return;
    *last = now;
    spdlog::info("decoding {}: {} of {} images{}", dataset, done, total,
                 done == total ? " (cached for the next run)" : "");
  };
}

void AddFineTuning(CLI::App& app, FineTuning& tuning, std::string& export_path) {
  app.add_option("--init-from", tuning.init_from,
                 "start from the weights in this .onnx or .mtc file (they must fit --model's "
                 "layers): a fresh optimizer at step 0, unlike --resume")
      ->type_name("FILE");
  app.add_option("--freeze", tuning.freeze,
                 "layers whose weights stay as they are (comma-separated names of layers with "
                 "weights; see mtmodel info)")
      ->type_name("LAYER")
      ->delimiter(',');
  app.add_option("--train-only", tuning.train_only,
                 "train only these layers and freeze every other layer with weights")
      ->type_name("LAYER")
      ->delimiter(',')
      ->excludes("--freeze");
  app.add_option("--export", export_path,
                 "write the final model here (.onnx, .mtc or a text spec, by extension); without "
                 "it the model is still kept (the last line printed names the file)")
      ->type_name("FILE");
}

void AddRunLength(CLI::App& app, int64_t& epochs, int64_t& max_steps) {
  app.add_option("--epochs", epochs,
                 "passes over the training set (0: as many as --steps needs, else 1); with --steps "
                 "too, the epochs must cover the steps")
      ->transform(Integer(0, 1 << 20));
  app.add_option("--steps", max_steps, "stop after this many steps in all (0: run all epochs)")
      ->transform(Integer(0));
}

void AddEvaluation(CLI::App& app, int64_t& eval_every, int64_t& patience, double& target_accuracy) {
  app.add_option("--patience", patience,
                 "stop when the test loss has not improved for this many epochs (0: never)")
      ->transform(Integer(0));
  app.add_option("--eval-every", eval_every,
                 "also evaluate on the test set every N steps (in rounds of local steps: at the "
                 "first round end after each N), for the report's eval_history (0: at epoch ends "
                 "only)")
      ->transform(Integer(0));
  app.add_option("--target-accuracy", target_accuracy,
                 "stop once the test accuracy reaches X and report seconds_to_target and "
                 "step_to_target (0: no target; pair with --eval-every to notice it between "
                 "epoch ends)")
      ->check(Real(0, 1));
}

void AddOptimizer(CLI::App& app, OptimizerConfig& optimizer) {
  AddChoice(app, "--optimizer", optimizer.kind,
            {{"adam", OptimizerKind::kAdam}, {"sgd", OptimizerKind::kSgd}},
            "the optimizer: adam, or sgd with --momentum");
  app.add_option("--lr", optimizer.lr,
                 "learning rate (default: adam 0.004 x sqrt(batch / 64), the global batch on the "
                 "hub; sgd 0.05: measured, docs/benchmarks.md)")
      ->check(Real(kMinLearningRate, kMaxLearningRate))
      ->default_str("");
  app.add_option("--momentum", optimizer.momentum, "SGD momentum (with --optimizer sgd only)")
      ->check(Real(0, kMaxMomentum));
  app.add_option("--weight-decay", optimizer.weight_decay, "L2 weight decay")
      ->check(Real(0, kMaxWeightDecay));
}

void ApplyDefaultLearningRate(const CLI::App& app, OptimizerConfig& optimizer, int64_t batch) {
  // Adam has no momentum of its own: the PyTorch habit `--lr 0.05
  // --momentum 0.9` would train Adam at SGD's rate, which stays at chance.
  if (app.count("--momentum") > 0 && optimizer.kind != OptimizerKind::kSgd)
    throw UsageError(std::string("--momentum is SGD's, and the optimizer is ") +
                     OptimizerKindName(optimizer.kind) +
                     (app.count("--optimizer") > 0 ? "" : " (the default)") +
                     ": add --optimizer sgd to train SGD with momentum, or leave --momentum out");
  if (app.count("--lr") > 0) {
    const std::string unusual = UnusualLearningRate(optimizer.kind, optimizer.lr, batch);
    if (!unusual.empty()) spdlog::warn("--lr: {}", unusual);
  } else {
    optimizer.lr = DefaultLearningRate(optimizer.kind, batch);
    optimizer.lr_from_batch = true;
  }
  // What a checkpoint's settings are held to as well (core/checkpoint).
  try {
    CheckOptimizerConfig(optimizer);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

void AddSeed(CLI::App& app, uint64_t& seed, const std::string& what) {
  app.add_option("--seed", seed, "seed for " + what)->transform(Integer(0));
}

void AddThreads(CLI::App& app, int64_t& threads, const std::string& what) {
  app.add_option("--threads", threads, what)->transform(Integer(1, 256));
}

void AddReport(CLI::App& app, std::string& path) {
  app.add_option("--report", path, "write a JSON report here when the run ends")->type_name("FILE");
}

void AddEvents(CLI::App& app, std::string& path, const std::string& what) {
  app.add_option("--events", path, what)->type_name("FILE");
}

void AddTrace(CLI::App& app, std::string& path, const std::string& what) {
  app.add_option("--trace", path, what)->type_name("FILE");
}

void AddLogEvery(CLI::App& app, double& seconds) {
  app.add_option("--log-every", seconds, "seconds between progress lines")->check(Real(0.1, 3600));
}

void AddLogLevel(CLI::App& app, std::string& level) {
  app.add_option("--log-level", level, "how much to log")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
}

void AddVersionAndHelp(CLI::App& app, const std::string& program) {
  app.footer(
      "Exit codes: 0 done, 1 runtime failure (data, model, network, I/O), 2 bad command line.");
  app.set_version_flag("--version", VersionText(program),
                       "print the program, its version and its wire protocol version, and exit");
  app.set_help_flag("-h,--help", "this text");
}

void AddToken(CLI::App& app, TokenSources& sources, const std::string& role) {
  app.add_option("--token", sources.token,
                 role +
                     "; shows in the process list (ps), so prefer --token-file or the environment "
                     "variable MT_TOKEN. Precedence: --token or --token-file (not both), else "
                     "MT_TOKEN, else no secret")
      ->type_name("SECRET");
  app.add_option("--token-file", sources.file,
                 "read the secret from the first line of FILE (trailing white space dropped)")
      ->type_name("FILE");
}

std::string ResolveToken(const TokenSources& sources) {
  if (!sources.token.empty() && !sources.file.empty())
    throw UsageError("--token and --token-file both give the secret; give one of them");
  if (!sources.file.empty()) {
    errno = 0;
    std::ifstream in(sources.file);
    std::string line;
    if (!in || (!std::getline(in, line) && !in.eof()))
      throw UsageError(
          "--token-file " + sources.file + ": cannot read it" +
          (errno != 0 ? std::string(" (") + std::strerror(errno) + ")" : std::string()));
    line.erase(line.find_last_not_of(" \t\r\n\v\f") + 1);
    if (line.empty())
      throw UsageError("--token-file " + sources.file + ": its first line is empty");
    return line;
  }
  if (!sources.token.empty()) {
    spdlog::warn(
        "--token: the secret shows in the process list (ps) to every user of this machine; "
        "prefer --token-file FILE or the environment variable MT_TOKEN");
    return sources.token;
  }
  const char* env = std::getenv("MT_TOKEN");
  return env ? env : "";
}

void ApplyLogLevel(const std::string& level) {
  static const std::pair<const char*, spdlog::level::level_enum> kLevels[] = {
      {"trace", spdlog::level::trace}, {"debug", spdlog::level::debug},
      {"info", spdlog::level::info},   {"warn", spdlog::level::warn},
      {"error", spdlog::level::err},   {"off", spdlog::level::off}};
  for (const auto& [name, value] : kLevels)
    if (level == name) spdlog::set_level(value);
}

void WarnIfMoreThreadsThanCores(int64_t threads) {
  const unsigned cores = std::thread::hardware_concurrency();
  if (cores > 0 && threads > static_cast<int64_t>(cores))
    spdlog::warn(
        "--threads {} is more than this machine's {} hardware threads; the extra threads only "
        "compete for them",
        threads, cores);
}

}  // namespace mt::cli
