// mtworker's command line: two modes that cannot mix. --hub trains with a
// hub, which decides the model, data, batches and optimizer; --standalone
// trains on this device alone and takes those as flags. A flag of the other
// mode is refused (exit 2), not ignored.
#pragma once

#include <optional>
#include <string>

#include "worker/standalone_trainer.h"
#include "worker/worker_config.h"

namespace mt {

struct WorkerOptions {
  bool standalone = false;  // --standalone; otherwise --hub
  WorkerConfig hub_mode;
  StandaloneConfig standalone_mode;
  std::string log_level = "info";
};

// Parses argv into `options` (both configs get the flags the modes share)
// and sets spdlog's level. In hub mode the hub's address is checked here, so
// a bad port or a host that does not resolve fails at once. Returns
// std::nullopt when mtworker goes on, or the exit code to return now: 0
// after --help or --version, 2 after a mistake (said on stderr).
std::optional<int> ParseWorkerOptions(int argc, const char* const* argv, WorkerOptions& options);

}  // namespace mt
