// mtworker: parse flags, build the worker, run. Exit codes: 0 done,
// 1 runtime failure (bad data, bad model, I/O), 2 bad command line.
#include <spdlog/spdlog.h>

#include <exception>

#include "core/util/malloc_tuning.h"
#include "core/util/stop_signal.h"
#include "worker/standalone_trainer.h"
#include "worker/worker_control.h"
#include "worker/worker_options.h"

int main(int argc, char** argv) {
  mt::KeepFreedMemoryForReuse();
  mt::WorkerOptions options;
  if (const std::optional<int> exit_code = mt::ParseWorkerOptions(argc, argv, options)) return *exit_code;

  mt::InstallStopSignalHandlers();
  try {
    if (options.standalone) return mt::RunStandalone(options.standalone_mode);
    mt::WorkerControl control;
    return mt::RunWorker(options.hub_mode, control);
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
}
