// mtworker: parse flags, build the worker, run. Exit codes: 0 done,
// 1 runtime failure (bad data, bad model, I/O), 2 bad command line.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>

#include "core/util/flags.h"
#include "core/util/malloc_tuning.h"
#include "core/util/stop_signal.h"
#include "worker/standalone_trainer.h"
#include "worker/worker_control.h"
#include "worker/worker_config.h"

namespace {

// "512M", "1G", "300000K", "1048576": bytes.
int64_t ParseBytes(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  double unit = 1;
  const std::string suffix = end ? std::string(end) : "";
  if (suffix == "K" || suffix == "k" || suffix == "KiB") unit = 1024.0;
  else if (suffix == "M" || suffix == "m" || suffix == "MiB") unit = 1024.0 * 1024;
  else if (suffix == "G" || suffix == "g" || suffix == "GiB") unit = 1024.0 * 1024 * 1024;
  else if (!suffix.empty()) unit = -1;
  if (end == text.c_str() || unit < 0 || !(v > 0) || v * unit > 1e15)
    throw mt::FlagError(flag + ": expected a size such as 256M or 1G, got '" + text + "'");
  return static_cast<int64_t>(v * unit);
}

}  // namespace

int main(int argc, char** argv) {
  mt::KeepFreedMemoryForReuse();
  mt::StandaloneConfig cfg;
  mt::WorkerConfig wcfg;
  bool standalone = false;
  int64_t seed = static_cast<int64_t>(cfg.seed);
  double lr = cfg.optimizer.lr, momentum = cfg.optimizer.momentum, wd = cfg.optimizer.weight_decay;

  mt::FlagSet flags("mtworker",
                    "--hub HOST[:PORT] [--device auto|cpu|opencl] [--threads T] [--name NAME] [--data DIR] [--report FILE]\n"
                    "       mtworker --standalone [--model lenet5|FILE] [--dataset NAME|DIR] [--batch B] [--epochs E] ...");
  flags.AddString("hub", &wcfg.hub, "train with the hub at HOST[:PORT] (port 50051 by default)");
  flags.AddString("name", &wcfg.name, "name shown in the hub's logs and report (default: host name)");
  flags.AddString("data", &wcfg.data_dir, "train on these local files (IDX or CIFAR-10 directory) instead of the hub's dataset");
  flags.AddString("token", &wcfg.token, "shared secret the hub expects");
  flags.AddDouble("connect-timeout", &wcfg.connect_timeout_seconds, "seconds to keep trying to reach the hub", 1, 1e7);
  std::string memory_budget;
  flags.AddString("memory-budget", &memory_budget,
                  "memory the model and its batch may use, e.g. 256M or 1G; the hub caps this worker's batch to fit "
                  "(default: no limit)");
  flags.AddDouble("slowdown", &wcfg.slowdown,
                  "for benchmarks and tests only: make every step take F times as long, to play a slower device", 1,
                  1000);
  int64_t min_battery = 0;
  flags.AddInt("min-battery", &min_battery, "leave the run when the battery is below this percentage and not charging (0: never)", 0, 100);
  flags.AddBool("require-charging", &wcfg.policy.require_charging, "leave the run when the device is not on external power");
  flags.AddDouble("max-temperature", &wcfg.policy.max_temperature_c,
                  "leave the run when the hottest thermal zone is above this (degrees C; 0: never)", 0, 200);
  flags.AddBool("standalone", &standalone, "train on this device alone (no hub)");
  flags.AddString("model", &cfg.model, "preset (lenet5, mentee) or text-format model spec file");
  flags.AddString("dataset", &cfg.dataset, "fashion-mnist, mnist, cifar10, or a directory of IDX or CIFAR-10 files");
  flags.AddString("device", &cfg.device, "where layers run: cpu, opencl, or auto (each layer on the faster of the CPU and an OpenCL GPU, measured at start; loading the OpenCL driver costs memory, so cpu is the default)", {"auto", "cpu", "opencl"});
  flags.AddInt("threads", &cfg.threads, "CPU threads for the compute kernels", 1, 256);
  flags.AddInt("batch", &cfg.batch, "samples per step", 1, 1 << 20);
  flags.AddInt("epochs", &cfg.epochs, "passes over the training set", 1, 1 << 20);
  flags.AddInt("steps", &cfg.max_steps, "stop after this many steps in all (0: run all epochs)", 0);
  flags.AddString("optimizer", &cfg.optimizer.kind, "optimizer", {"sgd", "adam"});
  flags.AddDouble("lr", &lr, "learning rate", 1e-9, 100);
  flags.AddDouble("momentum", &momentum, "SGD momentum", 0, 0.9999);
  flags.AddDouble("weight-decay", &wd, "L2 weight decay", 0, 1);
  flags.AddInt("seed", &seed, "seed for initial weights, shuffling and dropout", 0);
  flags.AddString("checkpoint-dir", &cfg.checkpoint_dir, "directory for checkpoints (written at each epoch end)");
  flags.AddInt("checkpoint-every", &cfg.checkpoint_every, "also checkpoint every N steps (0: epoch ends only)", 0);
  flags.AddBool("resume", &cfg.resume, "continue from the newest checkpoint in --checkpoint-dir");
  flags.AddString("report", &cfg.report_path, "write a JSON report here when the run ends");
  flags.AddDouble("log-every", &cfg.log_every_seconds, "seconds between progress lines", 0.1, 3600);

  try {
    if (!flags.Parse(argc, argv)) {
      std::fputs(flags.Help().c_str(), stdout);
      return 0;
    }
    if (standalone == flags.WasSet("hub")) throw mt::FlagError("give either --hub HOST[:PORT] or --standalone");
    if (cfg.resume && cfg.checkpoint_dir.empty()) throw mt::FlagError("--resume needs --checkpoint-dir");
    if (!memory_budget.empty()) wcfg.memory_budget_bytes = ParseBytes("--memory-budget", memory_budget);
  } catch (const mt::FlagError& e) {
    std::fprintf(stderr, "mtworker: %s\n", e.what());
    return 2;
  }
  cfg.seed = static_cast<uint64_t>(seed);
  cfg.optimizer.lr = static_cast<float>(lr);
  cfg.optimizer.momentum = static_cast<float>(momentum);
  cfg.optimizer.weight_decay = static_cast<float>(wd);

  wcfg.policy.min_battery_percent = static_cast<int>(min_battery);
  wcfg.device = cfg.device;
  wcfg.threads = cfg.threads;
  wcfg.report_path = cfg.report_path;
  wcfg.log_every_seconds = std::max(cfg.log_every_seconds, 1.0);

  try {
    mt::WorkerControl control;
    std::atomic<bool> stop_standalone{false};
    // A signal stops this worker the way an embedder would: it tells the
    // hub it leaves, then ends.
    mt::StopOnSignals on_signal([&] {
      stop_standalone = true;
      control.RequestStop("worker stopped by signal");
    });
    if (standalone) return mt::RunStandalone(cfg, &stop_standalone);
    return mt::RunWorker(wcfg, control);
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
}
