// mthub's differential-privacy flags (--dp-clip, --dp-noise, --dp-epsilon,
// --dp-delta) and their relations to each other and to the flags they
// rule out, checked before the hub starts (exit 2).
#pragma once

#include <CLI/CLI.hpp>

#include "hub/hub_config.h"

namespace mt {

void AddDpFlags(CLI::App& app, DpSettings& dp);
// Throws cli::UsageError for a combination a private run cannot take.
void CheckDpFlags(const CLI::App& app, const HubConfig& cfg);

}  // namespace mt
