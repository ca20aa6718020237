// mtworker_faulty: mtworker in hub mode with one more flag,
// --corrupt-gradients KIND (gradient_corruption.h), a hostile worker for
// the tests and benchmarks of the hub's defences (docs/security.md). Built
// under tests/ only: the production mtworker refuses the flag.
#include <spdlog/spdlog.h>

#include <cstdio>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/util/malloc_tuning.h"
#include "core/util/stop_signal.h"
#include "tests/faulty_worker/corrupting_hub_link.h"
#include "worker/worker_control.h"
#include "worker/worker_options.h"

namespace {

constexpr char kFlag[] = "--corrupt-gradients";

// Takes --corrupt-gradients KIND (or =KIND) out of argv; the rest is
// mtworker's. Throws std::invalid_argument for a flag without its value.
std::string TakeCorruptionFlag(int argc, char** argv, std::vector<const char*>* rest) {
  const std::string with_value = std::string(kFlag) + "=";
  std::string kind;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == kFlag) {
      if (i + 1 >= argc) throw std::invalid_argument(std::string(kFlag) + ": needs a KIND");
      kind = argv[++i];
    } else if (arg.compare(0, with_value.size(), with_value) == 0) {
      kind = arg.substr(with_value.size());
    } else {
      rest->push_back(argv[i]);
    }
  }
  return kind;
}

}  // namespace

int main(int argc, char** argv) {
  mt::KeepFreedMemoryForReuse();  // as mtworker
  std::vector<const char*> rest;
  mt::faulty::GradientCorruption corruption;
  try {
    corruption = mt::faulty::ParseGradientCorruption(TakeCorruptionFlag(argc, argv, &rest));
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "mtworker_faulty: %s: %s\n", kFlag, e.what());
    return 2;
  }
  mt::WorkerOptions options;
  if (const std::optional<int> exit_code =
          mt::ParseWorkerOptions(static_cast<int>(rest.size()), rest.data(), options))
    return *exit_code;
  if (options.standalone) {
    std::fprintf(stderr, "mtworker_faulty: %s is for hub mode (--hub) only\n", kFlag);
    return 2;
  }
  try {
    mt::WorkerControl control;
    mt::StopOnSignals on_signal([&] { control.RequestStop("worker stopped by signal"); });
    return mt::RunWorker(options.hub_mode, control, mt::faulty::CorruptEverySession(corruption));
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
}
