#include "hub/options/hub_options.h"

#include <CLI/CLI.hpp>

#include "core/cli/command_line.h"
#include "core/cli/common_options.h"
#include "hub/options/dp_flags.h"
#include "hub/options/hub_flag_sections.h"
#include "hub/options/hub_option_checks.h"
#include "tls/tls_flags.h"

namespace mt {

std::optional<int> ParseHubOptions(int argc, const char* const* argv, HubOptions& options) {
  HubConfig& cfg = options.config;
  CLI::App app(
      "mthub coordinates synchronous data-parallel training: workers (mtworker --hub) join, "
      "compute gradients on their shares of each step's batch, and the hub averages them.",
      "mthub");
  cli::Configure(app,
                 "mthub --workers N [--port 50051] [--model lenet5|FILE] [--dataset NAME|DIR] ...");

  // The sections in --help order (hub/options/hub_flag_sections.h).
  cli::TokenSources token;
  std::string resume_dir;
  AddClusterFlags(app, options);
  AddSecurityFlags(app, cfg, token);
  AddBatchFlags(app, cfg);
  AddHostileWorkerFlags(app, cfg);
  AddPrivacyFlags(app, cfg);
  AddStepFlags(app, cfg);
  AddTrainingFlags(app, cfg);
  AddCheckpointFlags(app, cfg, resume_dir);
  AddProcessFlags(app, options);

  return cli::Parse(app, argc, argv, [&] {
    CheckRelations(app, cfg);
    CheckDpFlags(app, cfg);
    if (cfg.secure_aggregation) cfg.compression = Compression::kNone;
    cli::ApplyDefaultLearningRate(app, cfg.optimizer, cfg.global_batch_or_default());
    cfg.http.port_explicit = app.count("--http-port") > 0;
    tls::CheckServerFlags(cfg.tls);
    ApplyResume(resume_dir, cfg);
    cfg.token = cli::ResolveToken(token);
    cli::ApplyLogLevel(options.log_level);
    cli::WarnIfMoreThreadsThanCores(cfg.threads);
  });
}

}  // namespace mt
