#include "worker/worker_options.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "core/cli/choice_option.h"
#include "core/cli/command_line.h"
#include "core/cli/common_options.h"
#include "core/cli/validators.h"
#include "core/data/dataset.h"
#include "core/util/process_stats.h"
#include "tls/tls_flags.h"
#include "worker/hub_connection.h"

namespace mt {
namespace {

using cli::Integer;
using cli::Real;
using cli::UsageError;

// A flag's --help section is also its mode: CheckModes refuses the flags of
// the other mode's section, so the help and the check cannot disagree.
const char kModeSection[] = "Mode (exactly one)";
// --memory-budget auto: this share of the memory available at start. A
// phone's memory is the user's: Android's low-memory killer takes
// background work first when free memory runs short, and the apps in front
// keep needing theirs. Half leaves as much to the device as training takes;
// a batch that would not fit in it is recomputed rather than cut
// (worker/local_trainer.cc), or cut by the hub.
constexpr double kAutoMemoryShare = 0.5;
const char kHubSection[] = "Hub mode only (with --hub)";
const char kSharedSection[] = "Both modes";
const char kStandaloneSection[] =
    "Standalone only (with --standalone; in hub mode the hub decides these)";

// The flags of one help section that were given, as "--a, --b".
std::string GivenIn(const CLI::App& app, const std::string& section) {
  std::string names;
  for (const CLI::Option* opt : app.get_options())
    if (opt->get_group() == section && opt->count() > 0)
      names += (names.empty() ? "" : ", ") + opt->get_name();
  return names;
}

bool OneName(const std::string& names) { return names.find(',') == std::string::npos; }

void CheckModes(const CLI::App& app, bool standalone) {
  const bool hub = app.count("--hub") > 0;
  if (standalone && hub)
    throw UsageError("--hub and --standalone cannot go together; give one of them");
  if (!standalone && !hub) throw UsageError("give either --hub HOST[:PORT] or --standalone");
  if (hub) {
    const std::string wrong = GivenIn(app, kStandaloneSection);
    if (!wrong.empty())
      throw UsageError(wrong +
                       (OneName(wrong) ? " belongs to the hub (set it on mthub)"
                                       : " belong to the hub (set them on mthub)") +
                       " or to --standalone: in hub mode the hub decides the model, data, batches, "
                       "optimizer and checkpoints");
  } else {
    const std::string wrong = GivenIn(app, kHubSection);
    if (!wrong.empty())
      throw UsageError(wrong + (OneName(wrong) ? " is" : " are") +
                       " for hub mode (--hub) only; --standalone trains on this device alone");
  }
}

// --memory-budget's value in bytes (0: no limit).
int64_t ResolveMemoryBudget(const std::string& text) {
  if (text == "none") return 0;
  if (text != "auto") return std::stoll(text);  // ByteSize wrote the bytes
  const int64_t available = AvailableMemoryBytes();
  return available > 0 ? static_cast<int64_t>(kAutoMemoryShare * static_cast<double>(available))
                       : 0;
}

}  // namespace

std::optional<int> ParseWorkerOptions(int argc, const char* const* argv, WorkerOptions& options) {
  WorkerConfig& hub_mode = options.hub_mode;
  StandaloneConfig& alone = options.standalone_mode;
  // Bound once, given to both modes' configs after parsing.
  WorkerSettings shared;
  CLI::App app("mtworker trains on this device's CPU or OpenCL GPU: with a hub (mthub), or alone.",
               "mtworker");
  cli::Configure(app,
                 "mtworker --hub HOST[:PORT] [--device auto|cpu|opencl] [--threads T] [--name "
                 "NAME] [--report FILE]\n       mtworker --standalone [--model lenet5|FILE] "
                 "[--dataset NAME|DIR] [--batch B] [--epochs E] ...");

  cli::Section(app, kModeSection);
  app.add_option("--hub", hub_mode.hub, "train with the hub at HOST[:PORT] (port 50051 by default)")
      ->option_text(
          "HOST[:PORT]")  // not type_name: a ':' there would split it (CLI::Option::get_type_name)
      ->default_str("");
  app.add_flag("--standalone", options.standalone, "train on this device alone (no hub)");

  cli::Section(app, kHubSection);
  app.add_option("--name", hub_mode.name,
                 "name shown in the hub's logs and report (default: host name)")
      ->type_name("NAME");
  app.add_option(
         "--data", hub_mode.data_dir,
         "train on this device's own files instead of the hub's dataset: a directory of IDX or "
         "CIFAR-10 files, or an image folder (DIR/<class>/*.png|jpg), read as the hub reads its "
         "own")
      ->type_name("DIR");
  app.add_option("--allow-data", hub_mode.allowed_data_dirs,
                 "a directory under which the hub may name its dataset (repeatable; the hub "
                 "otherwise gets only the known names: " +
                     KnownDatasetNames() + "); default: $MT_ALLOW_DATA, DIR:DIR:...")
      ->type_name("DIR")
      ->take_all();  // repeated, the directories add up
  cli::TokenSources token;
  cli::AddToken(app, token, "shared secret the hub expects");
  tls::AddClientFlags(app, hub_mode.tls);
  app.add_option("--connect-timeout", hub_mode.connect_timeout_seconds,
                 "seconds to keep trying to reach the hub")
      ->check(Real(1, 1e7));
  std::string memory_budget = "auto";
  app.add_option("--memory-budget", memory_budget,
                 "memory the model and its batch may use, e.g. 256M, 256MB, 1GiB or 300000K "
                 "(K, M, G, with or without B or iB: powers of 1024), auto: half the memory "
                 "available when the worker starts (the "
                 "rest stays the device's), or none; the hub caps this worker's batch to fit, "
                 "and where a batch would be cut the worker recomputes activations instead")
      ->type_name("SIZE|auto|none")
      ->transform(CLI::Validator(
          [](std::string& text) {
            return text == "auto" || text == "none" ? std::string() : cli::ByteSize()(text);
          },
          "", "SizeAutoOrNone"))
      ->default_str("auto");
  app.add_option(
         "--min-battery", hub_mode.policy.min_battery_percent,
         "leave the run when the battery is below this percentage and not charging (0: never)")
      ->transform(Integer(0, 100));
  app.add_flag("--require-charging", hub_mode.policy.require_charging,
               "leave the run when the device is not on external power");
  app.add_option("--max-temperature", hub_mode.policy.max_temperature_c,
                 "leave the run when the hottest thermal zone is above this (degrees C; 0: never)")
      ->check(Real(0, 200));
  cli::AddEvents(app, hub_mode.events_path,
                 "write what happens with the hub here as JSON lines, as it happens (waiting for "
                 "the hub, joined, state received, left out, hub lost, goodbye, finished)");
  app.add_option("--slowdown", hub_mode.slowdown,
                 "for benchmarks and tests only: make every step's compute take F times as long, "
                 "to play a slower device (F times its CPU time on the CPU with --threads 1, "
                 "so a core shared with other processes here is not counted F times; else F "
                 "times its wall time)")
      ->check(Real(1, 1000));

  cli::Section(app, kSharedSection);
  cli::AddChoice(app, "--device", shared.device, DeviceChoiceWords(),
                 "where layers run: cpu, opencl, or auto (each layer on the faster of the CPU and "
                 "an OpenCL GPU, measured at start; loading the OpenCL driver costs memory, so cpu "
                 "is the default)");
  cli::AddThreads(app, shared.threads, "CPU threads for the compute kernels");
  cli::AddReport(app, shared.report_path);
  app.add_option("--log-every", alone.log_every_seconds,
                 "seconds between progress lines (at least 1 in hub mode)")
      ->check(Real(0.1, 3600));
  app.add_flag("--recompute", shared.recompute,
               "keep fewer activations: replay batch norms, activations, adds and narrow 1x1 "
               "convs in the backward pass instead (about half the memory per sample for "
               "MobileNet-style models, some more time; same gradients); with --memory-budget "
               "it turns itself on when the budget would otherwise cut the batch");
  cli::AddChoice(app, "--activation-precision", shared.activation_precision,
                 ActivationPrecisionWords(),
                 "how the activations kept for the backward pass are stored: fp32, or bf16 / "
                 "fp16 (16 bits, widened to floats when read; compute stays in floats; about "
                 "half the memory per sample, gradients rounded as those values are)");
  app.add_flag("--profile", shared.profile,
               "time every step layer by layer and show, at the end, per layer forward and "
               "backward ms, GFLOP/s and share of the device's peak, the memory breakdown against "
               "the measured peak RSS, CPU utilisation and energy per step (where a battery says); "
               "in --report too (layers, memory, ...). Synchronises around each layer, so "
               "training runs a little slower (1-3% for LeNet-5 on a CPU), and measures the "
               "device's peak for 0.2 s at start");
  cli::AddTrace(app, shared.trace_path,
                "write this worker's timeline here when it ends, as a Chrome trace (open it in "
                "ui.perfetto.dev or chrome://tracing) on this machine's clock: forward and "
                "backward per layer, loss, optimizer, encode, send and wait for the hub's result. "
                "Synchronises around each layer, so training runs a little slower. (mthub "
                "--trace gathers every worker's spans into the hub's file without this.)");
  cli::AddLogLevel(app, options.log_level);
  cli::AddVersionAndHelp(app, "mtworker");

  cli::Section(app, kStandaloneSection);
  cli::AddModelAndDataset(app, alone.model, alone.dataset, "");
  cli::AddDataOptions(app, alone.data, /*training=*/true);
  app.add_option("--batch", alone.batch, "samples per step")->transform(Integer(1, 1 << 20));
  cli::AddRunLength(app, alone.epochs, alone.max_steps);
  cli::AddEvaluation(app, alone.eval_every, alone.patience, alone.target_accuracy);
  cli::AddOptimizer(app, alone.optimizer);
  cli::AddSeed(app, alone.seed, "initial weights, shuffling and dropout");
  app.add_option("--checkpoint-dir", alone.checkpoint_dir,
                 "directory for checkpoints (written at each epoch end)")
      ->type_name("DIR");
  app.add_option("--checkpoint-every", alone.checkpoint_every,
                 "also checkpoint every N steps (0: epoch ends only)")
      ->transform(Integer(0));
  app.add_flag("--resume", alone.resume, "continue from the newest checkpoint in --checkpoint-dir");
  cli::AddFineTuning(app, alone.tuning, alone.export_path);

  return cli::Parse(app, argc, argv, [&] {
    CheckModes(app, options.standalone);
    static_cast<WorkerSettings&>(alone) = shared;
    static_cast<WorkerSettings&>(hub_mode) = shared;
    if (options.standalone) {
      cli::ApplyDefaultLearningRate(app, alone.optimizer, alone.batch);
      if (alone.resume && alone.checkpoint_dir.empty())
        throw UsageError("--resume needs --checkpoint-dir");
      if (alone.resume && !alone.tuning.init_from.empty())
        throw UsageError(
            "--resume and --init-from: --resume continues a run, --init-from "
            "starts a new one from a model's weights; give one");
    } else {
      try {
        CheckHubAddress(hub_mode.hub);
      } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("--hub: ") + e.what());
      }
      hub_mode.token = cli::ResolveToken(token);
      tls::CheckClientFlags(hub_mode.tls);
      hub_mode.log_every_seconds = std::max(alone.log_every_seconds, 1.0);
      hub_mode.memory_budget_bytes = ResolveMemoryBudget(memory_budget);
    }
    cli::ApplyLogLevel(options.log_level);
    cli::WarnIfMoreThreadsThanCores(shared.threads);
  });
}

}  // namespace mt
