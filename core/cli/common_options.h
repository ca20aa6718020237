// The options mthub and mtworker share, defined once. Each Add* puts its
// options in the app's current help section (cli::Section) and binds them to
// the given fields, whose values at that moment are the defaults --help
// shows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "core/data/data_settings.h"
#include "core/model/fine_tuning.h"
#include "core/optim/optimizer.h"
#include "model.pb.h"

namespace CLI {
class App;
}

namespace mt::cli {

// --model, --dataset. `dataset_note` ends the --dataset help.
void AddModelAndDataset(CLI::App& app, std::string& model, std::string& dataset,
                        const std::string& dataset_note);
// --test-fraction, --skip-bad-images and, with `training`, --augment.
void AddDataOptions(CLI::App& app, DataSettings& data, bool training);
// Logs the first decode of an image folder ("decoding DIR: 12000 of 60000
// images"), at most every few seconds; for DataOptions::progress.
std::function<void(size_t, size_t)> DecodeProgressLog(const std::string& dataset);
// How every tool reads `dataset` for `model`: at its input size and
// scaling, an image folder labelled by its class names, the first decode
// logged (DecodeProgressLog).
DataOptions ReadOptionsFor(const std::string& dataset, const DataSettings& settings,
                           const proto::ModelSpec& model);
// The training set's size and classes as mthub and mtworker --standalone
// read it (ReadOptionsFor, into *read), logging the images left out.
// Throws DataError.
DatasetInfo PeekTrainingSet(const std::string& dataset, const DataSettings& settings,
                            const proto::ModelSpec& model, DataOptions* read);
// --epochs, --steps.
void AddRunLength(CLI::App& app, int64_t& epochs, int64_t& max_steps);
// --init-from, --freeze, --train-only, --export.
void AddFineTuning(CLI::App& app, FineTuning& tuning, std::string& export_path);
// --eval-every, --patience, --target-accuracy: when the training loop
// (core/train/training_loop.h) evaluates, and when that ends the run.
void AddEvaluation(CLI::App& app, int64_t& eval_every, int64_t& patience, double& target_accuracy);
// --optimizer, --lr, --momentum, --weight-decay.
void AddOptimizer(CLI::App& app, OptimizerConfig& optimizer);
// After parsing: without --lr, the optimizer's own rate for `batch` samples
// per step (DefaultLearningRate). Adam at SGD's rate does not train, so an
// --lr far from the optimizer's usual range (UnusualLearningRate) is warned
// about, and --momentum with any optimizer but SGD is refused (UsageError
// naming --optimizer sgd). Then the whole config goes through
// CheckOptimizerConfig, as a checkpoint's does.
void ApplyDefaultLearningRate(const CLI::App& app, OptimizerConfig& optimizer, int64_t batch);
// --seed. `what` says what it seeds.
void AddSeed(CLI::App& app, uint64_t& seed, const std::string& what);
// --threads. `what` says what the threads do.
void AddThreads(CLI::App& app, int64_t& threads, const std::string& what);
// --report.
void AddReport(CLI::App& app, std::string& path);
// --events FILE: the run's events as JSON lines. `what` says which events.
void AddEvents(CLI::App& app, std::string& path, const std::string& what);
// --trace FILE: a Chrome trace. `what` says whose timeline and what it holds.
void AddTrace(CLI::App& app, std::string& path, const std::string& what);
// --log-every.
void AddLogEvery(CLI::App& app, double& seconds);
// --log-level: trace|debug|info|warn|error|off.
void AddLogLevel(CLI::App& app, std::string& level);
// --version and -h/--help (in the current section), and the exit codes at
// the end of --help.
void AddVersionAndHelp(CLI::App& app, const std::string& program);

// The secret shared by the hub and its workers: --token SECRET,
// --token-file FILE, or the environment variable MT_TOKEN.
struct TokenSources {
  std::string token;
  std::string file;
};
// --token, --token-file. `role` says what the secret is for.
void AddToken(CLI::App& app, TokenSources& sources, const std::string& role);
// The secret, by precedence: --token or --token-file (not both), else
// MT_TOKEN, else none (""). Throws UsageError when both flags are given, or
// the file cannot be read or its first line is empty.
std::string ResolveToken(const TokenSources& sources);

// Sets spdlog's level from a --log-level value.
void ApplyLogLevel(const std::string& level);
// Warns (once, through spdlog) when --threads is above the hardware threads.
void WarnIfMoreThreadsThanCores(int64_t threads);

}  // namespace mt::cli
