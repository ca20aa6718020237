// mtworker: parse flags, build the worker, run. Exit codes: 0 done,
// 1 runtime failure (bad data, bad model, I/O), 2 bad command line.
#include <spdlog/spdlog.h>

#include <cstdio>
#include <exception>

#include "core/util/flags.h"
#include "core/util/stop_signal.h"
#include "worker/standalone_trainer.h"

int main(int argc, char** argv) {
  mt::StandaloneConfig cfg;
  bool standalone = false;
  int64_t seed = static_cast<int64_t>(cfg.seed);
  double lr = cfg.optimizer.lr, momentum = cfg.optimizer.momentum, wd = cfg.optimizer.weight_decay;

  mt::FlagSet flags("mtworker", "--standalone [--model lenet5|FILE] [--dataset NAME|DIR] [--batch B] [--epochs E] ...");
  flags.AddBool("standalone", &standalone, "train on this device alone (no hub)");
  flags.AddString("model", &cfg.model, "preset (lenet5, mentee) or text-format model spec file");
  flags.AddString("dataset", &cfg.dataset, "fashion-mnist, mnist, cifar10, or a directory of IDX or CIFAR-10 files");
  flags.AddString("device", &cfg.device, "compute device", {"auto", "cpu", "opencl"});
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
    if (!standalone) throw mt::FlagError("give --standalone (distributed mode with --hub is not built yet)");
    if (cfg.resume && cfg.checkpoint_dir.empty()) throw mt::FlagError("--resume needs --checkpoint-dir");
  } catch (const mt::FlagError& e) {
    std::fprintf(stderr, "mtworker: %s\n", e.what());
    return 2;
  }
  cfg.seed = static_cast<uint64_t>(seed);
  cfg.optimizer.lr = static_cast<float>(lr);
  cfg.optimizer.momentum = static_cast<float>(momentum);
  cfg.optimizer.weight_decay = static_cast<float>(wd);

  mt::InstallStopSignalHandlers();
  try {
    return mt::RunStandalone(cfg);
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
}
