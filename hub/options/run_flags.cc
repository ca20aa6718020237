#include "hub/options/hub_flag_sections.h"

#include <CLI/CLI.hpp>

#include "core/cli/command_line.h"
#include "core/cli/common_options.h"
#include "core/cli/validators.h"

namespace mt {

using cli::Integer;

void AddTrainingFlags(CLI::App& app, HubConfig& cfg) {
  cli::Section(app, "Model, data and training");
  cli::AddModelAndDataset(app, cfg.model, cfg.dataset, " (the same path on every worker)");
  cli::AddDataOptions(app, cfg.data, /*training=*/true);
  app.add_option_function<std::string>(
         "--partition",
         [&cfg](const std::string& text) { cfg.data.partition = ParsePartition(text); },
         "how the training set is split among the workers, SPEC being iid (one shared "
         "shuffle), or each worker its own samples as phones hold them: dirichlet:ALPHA (each "
         "class split by "
         "Dirichlet(ALPHA) proportions; 0.1 is very skewed), classes:K (K classes each); worker "
         "id k takes share k mod --workers, the report's partition_histograms")
      ->check(cli::ParsedBy([](const std::string& text) { ParsePartition(text); }))
      // Not "iid|dirichlet:ALPHA|...": the help formatter splits type names at ':'.
      ->type_name("SPEC")
      ->default_str("iid");
  app.add_flag("!--weight-by-batch", cfg.data.weight_by_share,
               "with --partition: average the workers' contributions by their batches' samples, "
               "not by the samples of their shares (the default, which keeps the average the "
               "whole set's gradient when shares differ in size)");
  cli::AddRunLength(app, cfg.epochs, cfg.max_steps);
  cli::AddFineTuning(app, cfg.tuning, cfg.export_path);
  cli::AddEvaluation(app, cfg.eval_every, cfg.patience, cfg.target_accuracy);
  cli::AddSeed(app, cfg.seed, "initial weights and shuffles");
  cli::AddOptimizer(app, cfg.optimizer);
}

void AddCheckpointFlags(CLI::App& app, HubConfig& cfg, std::string& resume_dir) {
  cli::Section(app, "Checkpoints");
  app.add_option(
         "--checkpoint-dir", cfg.checkpoint_dir,
         "directory for checkpoints (every --checkpoint-every steps, epoch ends and shutdown)")
      ->type_name("DIR");
  app.add_option("--checkpoint-every", cfg.checkpoint_every,
                 "checkpoint every N steps (0: epoch ends and shutdown only)")
      ->transform(Integer(0));
  app.add_option(
         "--resume", resume_dir,
         "continue from the newest checkpoint in DIR (and keep checkpointing there); starts afresh "
         "if there is none yet; --checkpoint-dir, if given too, must name the same directory")
      ->type_name("DIR");
}

void AddProcessFlags(CLI::App& app, HubOptions& options) {
  HubConfig& cfg = options.config;
  cli::Section(app, "Process");
  cli::AddThreads(app, cfg.threads, "hub compute threads (averaging, optimizer, evaluation)");
  cli::AddReport(app, cfg.report_path);
  cli::AddEvents(app, cfg.events_path,
                 "write the run's events here as JSON lines, as they happen (workers joining, left "
                 "out, back, dropped, leaving; progress as logged, epochs, checkpoints, the end)");
  cli::AddTrace(app, cfg.trace_path,
                "write one timeline of the run here when it ends, as a Chrome trace (open it in "
                "ui.perfetto.dev or chrome://tracing): a row per device on the hub's clock, the "
                "hub's receive, barrier wait, reduce, optimizer, broadcast, evaluation and "
                "checkpoints, and each worker's forward and backward per layer, encode, send and "
                "wait (workers send their spans with their gradients; their clocks' offsets are "
                "estimated from round trips)");
  cli::AddLogEvery(app, cfg.log_every_seconds);
  cli::AddLogLevel(app, options.log_level);
  cli::AddVersionAndHelp(app, "mthub");
}

}  // namespace mt
