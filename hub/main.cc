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
#include "hub/http/linger.h"
#include "hub/hub.h"
#include "hub/options/hub_options.h"

int main(int argc, char** argv) {
  mt::KeepFreedMemoryForReuse();
  mt::HubOptions options;
  if (const std::optional<int> exit_code = mt::ParseHubOptions(argc, argv, options))
    return *exit_code;

  mt::Linger linger;
  if (!options.serve_report.empty()) {
    mt::StopOnSignals on_signal([&linger] { linger.Stop(); });
    return mt::ServeReport(options.config, options.serve_report, linger);
  }
  try {
    mt::Hub hub(options.config);
    mt::StopOnSignals on_signal([&hub, &linger] {
      hub.RequestStop();
      linger.Stop();
    });
    hub.Start();
    if (!options.port_file.empty())
      mt::WriteFileAtomically(options.port_file, std::to_string(hub.port()) + "\n");
    const int code = hub.Run();
    if (options.linger != 0 && options.config.http.port > 0) {
      spdlog::info("the run is over; the dashboard shows it {} (SIGINT/SIGTERM ends it)",
                   options.linger < 0 ? "until stopped"
                                      : "for " + std::to_string(options.linger) + " s more");
      linger.Wait(options.linger);
    }
    return code;
  } catch (const mt::RunLengthError& e) {
    // --steps and --epochs that disagree: known only once the data's size is.
    std::fprintf(stderr, "%s: %s (see %s --help)\n", "mthub", e.what(), "mthub");
    return 2;
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
}
