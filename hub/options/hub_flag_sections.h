// mthub's flags, one function per --help section, in the order --help
// shows them (hub/options/hub_options.cc calls them): each section's flags
// are defined in one place, bound to the HubConfig field they fill.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "core/cli/common_options.h"
#include "hub/hub_config.h"
#include "hub/options/hub_options.h"

namespace mt {

// cluster_flags.cc
void AddClusterFlags(CLI::App& app, HubOptions& options);  // "Cluster"
void AddSecurityFlags(CLI::App& app, HubConfig& cfg,
                      cli::TokenSources& token);  // "Security"
// round_flags.cc
void AddBatchFlags(CLI::App& app, HubConfig& cfg);  // "Batches"
void AddStepFlags(CLI::App& app, HubConfig& cfg);   // "Steps and stragglers"
// defence_flags.cc
void AddHostileWorkerFlags(CLI::App& app, HubConfig& cfg);  // "Hostile workers"
void AddPrivacyFlags(CLI::App& app, HubConfig& cfg);        // "Differential privacy", "Privacy"
// run_flags.cc
void AddTrainingFlags(CLI::App& app, HubConfig& cfg);  // "Model, data and training"
// "Checkpoints"; --resume's directory goes to `resume_dir` (ApplyResume).
void AddCheckpointFlags(CLI::App& app, HubConfig& cfg, std::string& resume_dir);
void AddProcessFlags(CLI::App& app, HubOptions& options);  // "Process"

}  // namespace mt
