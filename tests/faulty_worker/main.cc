// mtworker_faulty: mtworker in hub mode with three more flags, a hostile
// worker for the tests and benchmarks of the hub's defences
// (docs/security.md): --corrupt-gradients KIND (gradient_corruption.h),
// --claim-ms-per-sample X (Hello claims X ms per sample, whatever the
// worker measured) and --hold-gradients-ms N (each step's contribution
// waits N ms before it is sent). Built under tests/ only: the production
// mtworker refuses them.
#include <spdlog/spdlog.h>

#include <cmath>
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
constexpr char kClaimFlag[] = "--claim-ms-per-sample";
constexpr char kHoldFlag[] = "--hold-gradients-ms";

// Takes `flag` VALUE (or flag=VALUE) out of `args`; "" when absent. Throws
// std::invalid_argument for a flag without its value.
std::string TakeFlag(const char* flag, std::vector<const char*>* args) {
  const std::string with_value = std::string(flag) + "=";
  std::string value;
  std::vector<const char*> rest;
  for (size_t i = 0; i < args->size(); ++i) {
    const std::string arg = (*args)[i];
    if (arg == flag) {
      if (i + 1 >= args->size()) throw std::invalid_argument(std::string(flag) + ": needs a value");
      value = (*args)[++i];
    } else if (arg.compare(0, with_value.size(), with_value) == 0) {
      value = arg.substr(with_value.size());
    } else {
      rest.push_back((*args)[i]);
    }
  }
  *args = rest;
  return value;
}

// A positive finite number, or throws naming the flag.
double PositiveNumber(const char* flag, const std::string& text) {
  size_t used = 0;
  double x = 0;
  try {
    x = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !std::isfinite(x) || x <= 0)
    throw std::invalid_argument(std::string(flag) + ": expected a positive number, got '" + text +
                                "'");
  return x;
}

}  // namespace

int main(int argc, char** argv) {
  mt::KeepFreedMemoryForReuse();  // as mtworker
  std::vector<const char*> rest(argv, argv + argc);
  mt::faulty::Misbehaviour misbehaviour;
  try {
    misbehaviour.corruption = mt::faulty::ParseGradientCorruption(TakeFlag(kFlag, &rest));
    if (const std::string claim = TakeFlag(kClaimFlag, &rest); !claim.empty())
      misbehaviour.claim_ms_per_sample = PositiveNumber(kClaimFlag, claim);
    if (const std::string hold = TakeFlag(kHoldFlag, &rest); !hold.empty())
      misbehaviour.hold_ms = static_cast<int>(PositiveNumber(kHoldFlag, hold));
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "mtworker_faulty: %s\n", e.what());
    return 2;
  }
  mt::WorkerOptions options;
  if (const std::optional<int> exit_code =
          mt::ParseWorkerOptions(static_cast<int>(rest.size()), rest.data(), options))
    return *exit_code;
  if (options.standalone) {
    std::fprintf(stderr, "mtworker_faulty: its flags are for hub mode (--hub) only\n");
    return 2;
  }
  try {
    mt::WorkerControl control;
    mt::StopOnSignals on_signal([&] { control.RequestStop("worker stopped by signal"); });
    return mt::RunWorker(options.hub_mode, control, mt::faulty::CorruptEverySession(misbehaviour));
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
}
