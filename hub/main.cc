// mthub: parse flags, build the hub, serve, train. Exit codes: 0 done (also
// after SIGINT/SIGTERM: workers get a goodbye and a checkpoint is written),
// 1 runtime failure, 2 bad command line.
#include <spdlog/spdlog.h>

#include <cstdio>
#include <exception>
#include <sstream>

#include "core/util/atomic_file.h"
#include "core/util/flags.h"
#include "core/util/malloc_tuning.h"
#include "core/util/stop_signal.h"
#include "hub/hub.h"

namespace {

std::vector<int> ParseBatches(const std::string& text) {
  std::vector<int> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    char* end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 1 || v > 1 << 20)
      throw mt::FlagError("--worker-batches: expected positive integers separated by commas, got '" + text + "'");
    out.push_back(static_cast<int>(v));
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  mt::KeepFreedMemoryForReuse();
  mt::HubConfig cfg;
  int64_t workers = cfg.workers, port = cfg.port, seed = static_cast<int64_t>(cfg.seed), digest_every = cfg.digest_every;
  double lr = cfg.optimizer.lr, momentum = cfg.optimizer.momentum, wd = cfg.optimizer.weight_decay;
  std::string worker_batches, port_file;

  mt::FlagSet flags("mthub", "--workers N [--port 50051] [--model lenet5|FILE] [--dataset NAME|DIR] ...");
  flags.AddInt("workers", &workers, "workers to wait for before training starts", 1, 4096);
  flags.AddString("bind", &cfg.bind, "address to listen on");
  flags.AddString("port-file", &port_file, "write the port actually bound here once listening (with --port 0)");
  flags.AddInt("port", &port, "port to listen on (0: any free port)", 0, 65535);
  flags.AddString("model", &cfg.model, "preset (lenet5, mentee) or text-format model spec file");
  flags.AddString("dataset", &cfg.dataset, "fashion-mnist, mnist, cifar10, or a directory (same path on every worker)");
  flags.AddInt("global-batch", &cfg.global_batch, "samples per step over all workers (0: 64 per worker)", 0, 1 << 24);
  flags.AddString("worker-batches", &worker_batches, "fixed batch per worker in join order, e.g. 16,32,16 (implies --batch-policy fixed)");
  flags.AddString("batch-policy", &cfg.batch_policy,
                  "how the global batch is split: balanced (by each worker's measured speed, so all finish together) "
                  "or fixed (equal shares)",
                  {"fixed", "balanced"});
  int64_t min_workers = cfg.min_workers;
  flags.AddInt("min-workers", &min_workers, "below this many workers the hub waits instead of training on", 1, 4096);
  flags.AddDouble("step-deadline", &cfg.step_deadline_seconds,
                  "seconds a step waits for a worker before going on without it (0: adaptive, --deadline-factor "
                  "times the recent step time, at least --deadline-floor)",
                  0, 1e6);
  flags.AddDouble("deadline-factor", &cfg.deadline_factor, "adaptive deadline: multiple of the recent step time", 1, 1e6);
  flags.AddDouble("deadline-floor", &cfg.deadline_floor_seconds, "adaptive deadline: never shorter than this (seconds)",
                  0.01, 1e6);
  std::string resume_dir;
  flags.AddString("resume", &resume_dir,
                  "continue from the newest checkpoint in DIR (and keep checkpointing there); starts afresh if there "
                  "is none yet");
  flags.AddString("compress", &cfg.compression,
                  "gradient encoding on the wire, both directions: none, fp16, or int8 (a scale per 256 values, "
                  "with error feedback)",
                  {"none", "fp16", "int8"});
  flags.AddInt("epochs", &cfg.epochs, "passes over the training set", 1, 1 << 20);
  flags.AddInt("steps", &cfg.max_steps, "stop after this many steps (0: run all epochs)", 0);
  flags.AddString("optimizer", &cfg.optimizer.kind, "optimizer", {"sgd", "adam"});
  flags.AddDouble("lr", &lr, "learning rate", 1e-9, 100);
  flags.AddDouble("momentum", &momentum, "SGD momentum", 0, 0.9999);
  flags.AddDouble("weight-decay", &wd, "L2 weight decay", 0, 1);
  flags.AddInt("seed", &seed, "seed for initial weights and shuffles", 0);
  flags.AddInt("patience", &cfg.patience, "stop when the test loss has not improved for this many epochs (0: never)", 0);
  flags.AddString("token", &cfg.token, "shared secret workers must present");
  flags.AddString("checkpoint-dir", &cfg.checkpoint_dir, "directory for checkpoints (every --checkpoint-every steps, epoch ends and shutdown)");
  flags.AddInt("checkpoint-every", &cfg.checkpoint_every, "checkpoint every N steps (0: epoch ends and shutdown only)", 0);
  flags.AddInt("digest-every", &digest_every, "workers send a weight digest every N steps", 1, 1 << 20);
  flags.AddString("report", &cfg.report_path, "write a JSON report here when the run ends");
  flags.AddInt("threads", &cfg.threads, "hub compute threads (averaging, optimizer, evaluation)", 1, 256);
  flags.AddDouble("log-every", &cfg.log_every_seconds, "seconds between progress lines", 0.1, 3600);
  try {
    if (!flags.Parse(argc, argv)) {
      std::fputs(flags.Help().c_str(), stdout);
      return 0;
    }
    if (!worker_batches.empty()) cfg.worker_batches = ParseBatches(worker_batches);
    if (!worker_batches.empty() && flags.WasSet("batch-policy") && cfg.batch_policy != "fixed")
      throw mt::FlagError("--worker-batches fixes each worker's batch; it cannot go with --batch-policy balanced");
    if (!resume_dir.empty()) {
      if (!cfg.checkpoint_dir.empty() && cfg.checkpoint_dir != resume_dir)
        throw mt::FlagError("--resume " + resume_dir + " and --checkpoint-dir " + cfg.checkpoint_dir +
                            " differ; give one directory");
      cfg.checkpoint_dir = resume_dir;
      cfg.resume = true;
    }
    if (min_workers > workers) throw mt::FlagError("--min-workers cannot exceed --workers");
  } catch (const mt::FlagError& e) {
    std::fprintf(stderr, "mthub: %s\n", e.what());
    return 2;
  }
  cfg.workers = static_cast<int>(workers);
  cfg.min_workers = static_cast<int>(min_workers);
  cfg.port = static_cast<int>(port);
  cfg.seed = static_cast<uint64_t>(seed);
  cfg.digest_every = static_cast<int>(digest_every);
  cfg.optimizer.lr = static_cast<float>(lr);
  cfg.optimizer.momentum = static_cast<float>(momentum);
  cfg.optimizer.weight_decay = static_cast<float>(wd);

  try {
    mt::Hub hub(cfg);
    mt::StopOnSignals on_signal([&hub] { hub.RequestStop(); });
    hub.Start();
    if (!port_file.empty()) mt::WriteFileAtomically(port_file, std::to_string(hub.port()) + "\n");
    return hub.Run();
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
}
