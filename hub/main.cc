// mthub: parse flags, build the hub, serve, train. Exit codes: 0 done (also
// after SIGINT/SIGTERM: workers get a goodbye and a checkpoint is written),
// 1 runtime failure, 2 bad command line.
#include <spdlog/spdlog.h>

#include <cstdio>
#include <exception>

#include "core/train/run_plan.h"
#include "core/util/atomic_file.h"
#include "core/util/malloc_tuning.h"
#include "core/util/stop_signal.h"
#include "hub/hub.h"
#include "hub/hub_options.h"

int main(int argc, char** argv) {
  mt::KeepFreedMemoryForReuse();
  mt::HubOptions options;
  if (const std::optional<int> exit_code = mt::ParseHubOptions(argc, argv, options))
    return *exit_code;

  try {
    mt::Hub hub(options.config);
    mt::StopOnSignals on_signal([&hub] { hub.RequestStop(); });
    hub.Start();
    if (!options.port_file.empty())
      mt::WriteFileAtomically(options.port_file, std::to_string(hub.port()) + "\n");
    return hub.Run();
  } catch (const mt::RunLengthError& e) {
    // --steps and --epochs that disagree: known only once the data's size is.
    std::fprintf(stderr, "%s: %s (see %s --help)\n", "mthub", e.what(), "mthub");
    return 2;
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
}
