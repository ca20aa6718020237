// The relations between mthub's flags, checked once every flag is parsed:
// each mistake throws cli::UsageError (exit 2).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "hub/hub_config.h"

namespace mt {

// Relations between flags; the Hub constructor would refuse most of these
// too, but only after loading the data, and as a runtime failure.
void CheckRelations(const CLI::App& app, const HubConfig& cfg);

// --resume DIR (empty: not given): checkpoints go to DIR and the run
// continues from the newest there; refused with a different
// --checkpoint-dir or with --init-from.
void ApplyResume(const std::string& resume_dir, HubConfig& cfg);

}  // namespace mt
