// mthub: parse flags, build the hub, serve, train. Exit codes: 0 done (also
// after SIGINT/SIGTERM: workers get a goodbye and a checkpoint is written),
// 1 runtime failure, 2 bad command line.
#include <spdlog/spdlog.h>

#include <exception>

#include "core/util/atomic_file.h"
#include "core/util/malloc_tuning.h"
#include "core/util/stop_signal.h"
#include "hub/hub.h"
#include "hub/hub_options.h"

int main(int argc, char** argv) {
  mt::KeepFreedMemoryForReuse();
  mt::HubOptions options;
  if (const std::optional<int> exit_code = mt::ParseHubOptions(argc, argv, options)) return *exit_code;

  mt::InstallStopSignalHandlers();
  try {
    mt::Hub hub(options.config);
    hub.Start();
    if (!options.port_file.empty()) mt::WriteFileAtomically(options.port_file, std::to_string(hub.port()) + "\n");
    return hub.Run();
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
}
