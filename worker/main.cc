// mtworker: parse flags, build the worker, run. Exit codes: 0 done,
// 1 runtime failure (bad data, bad model, I/O), 2 bad command line.
#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdio>
#include <exception>

#include "core/train/run_plan.h"
#include "core/util/malloc_tuning.h"
#include "core/util/stop_signal.h"
#include "worker/standalone_trainer.h"
#include "worker/worker_control.h"
#include "worker/worker_options.h"

int main(int argc, char** argv) {
  mt::KeepFreedMemoryForReuse();
  mt::WorkerOptions options;
  if (const std::optional<int> exit_code = mt::ParseWorkerOptions(argc, argv, options))
    return *exit_code;

  try {
    mt::WorkerControl control;
    std::atomic<bool> stop_standalone{false};
    // A signal stops this worker the way an embedder would: it tells the
    // hub it leaves, then ends.
    mt::StopOnSignals on_signal([&] {
      stop_standalone = true;
      control.RequestStop("worker stopped by signal");
    });
    if (options.standalone) return mt::RunStandalone(options.standalone_mode, &stop_standalone);
    return mt::RunWorker(options.hub_mode, control);
  } catch (const mt::RunLengthError& e) {
    // --steps and --epochs that disagree: known only once the data's size is.
    std::fprintf(stderr, "%s: %s (see %s --help)\n", "mtworker", e.what(), "mtworker");
    return 2;
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
}
