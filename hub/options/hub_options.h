// mthub's command line: the flags, their defaults and ranges, and the
// relations between them, checked before the hub starts so that every
// command-line mistake exits 2 (the Hub constructor still checks what
// library callers give it).
#pragma once

#include <optional>
#include <string>

#include "hub/hub_config.h"

namespace mt {

struct HubOptions {
  HubConfig config;
  std::string port_file;  // write the bound port here once listening
  std::string log_level = "info";
  // After the run, the dashboard keeps serving for this many seconds; -1:
  // until SIGINT/SIGTERM.
  int linger = 0;
  // --serve-report FILE: no run; the report shown as the dashboard.
  std::string serve_report;
};

// Parses argv into `options` and sets spdlog's level. Returns std::nullopt
// when mthub goes on, or the exit code to return now: 0 after --help or
// --version, 2 after a mistake (said on stderr).
std::optional<int> ParseHubOptions(int argc, const char* const* argv, HubOptions& options);

}  // namespace mt
