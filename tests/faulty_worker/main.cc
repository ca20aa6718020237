// mtworker_faulty: mtworker in hub mode with more flags, a hostile worker
// for the tests and benchmarks of the hub's defences (docs/security.md):
// --corrupt-gradients KIND (gradient_corruption.h), --claim-ms-per-sample X
// (Hello claims X ms per sample, whatever the worker measured),
// --hold-gradients-ms N (each step's contribution waits N ms before it is
// sent) and --rejoin-every N (after N contributions the worker Leaves and
// Joins again as a new worker: a new id; issue 45's session cycling, until
// the hub ends the run). Built under tests/ only: the production mtworker
// refuses them.
#include <spdlog/spdlog.h>

#include <cmath>
#include <cstdio>
#include <exception>
#include <memory>
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
constexpr char kRejoinFlag[] = "--rejoin-every";

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

// N of --rejoin-every N (0: never); throws std::invalid_argument.
int ParseRejoinEvery(const std::string& text) {
  if (text.empty()) return 0;
  size_t used = 0;
  const int n = std::stoi(text, &used);
  if (used != text.size() || n < 1) throw std::invalid_argument("'" + text + "': expected N >= 1");
  return n;
}

// Passes everything through, and after `every` contributions (their last
// chunks) asks the worker to leave, noting that it did.
class RejoiningLink final : public mt::HubLink {
 public:
  RejoiningLink(std::unique_ptr<mt::HubLink> inner, int every, mt::WorkerControl& control,
                bool& rejoin)
      : inner_(std::move(inner)), every_(every), control_(control), rejoin_(rejoin) {}
  bool Send(const mt::proto::WorkerMessage& message) override {
    const bool sent = inner_->Send(message);
    if (message.has_gradient() && message.gradient().last() && ++sent_ == every_) {
      rejoin_ = true;
      control_.RequestStop("rejoining as a new worker (--rejoin-every)");
    }
    return sent;
  }
  bool Read(mt::proto::HubMessage* message) override { return inner_->Read(message); }
  void CloseSending() override { inner_->CloseSending(); }

 private:
  std::unique_ptr<mt::HubLink> inner_;
  const int every_;
  int sent_ = 0;
  mt::WorkerControl& control_;
  bool& rejoin_;
};

}  // namespace

int main(int argc, char** argv) {
  mt::KeepFreedMemoryForReuse();  // as mtworker
  std::vector<const char*> rest(argv, argv + argc);
  mt::faulty::Misbehaviour misbehaviour;
  int rejoin_every = 0;
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
  try {
    rejoin_every = ParseRejoinEvery(TakeFlag(kRejoinFlag, &rest));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mtworker_faulty: %s: %s\n", kRejoinFlag, e.what());
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
    for (;;) {
      mt::WorkerControl control;
      mt::StopOnSignals on_signal([&] { control.RequestStop("worker stopped by signal"); });
      const mt::HubLinkDecorator corrupt = mt::faulty::CorruptEverySession(misbehaviour);
      bool rejoin = false;
      mt::HubLinkDecorator decorate = corrupt;
      if (rejoin_every > 0)
        decorate = [&](mt::HubLink& link, const mt::proto::JoinReply& join) {
          return std::unique_ptr<mt::HubLink>(
              std::make_unique<RejoiningLink>(corrupt(link, join), rejoin_every, control, rejoin));
        };
      const int code = mt::RunWorker(options.hub_mode, control, decorate);
      if (!rejoin || code != 0) return code;
    }
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
}
