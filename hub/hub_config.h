#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/compress/gradient_codec.h"
#include "core/privacy/dp_settings.h"
#include "core/train/process_settings.h"
#include "core/train/run_settings.h"
#include "hub/aggregation/robust_aggregate.h"
#include "hub/policy/batch_controller.h"
#include "hub/policy/step_deadline.h"
#include "tls/tls_options.h"

namespace mt {

// Local SGD: the rounds workers take between exchanges and how the hub
// applies a round's average change.
struct LocalSgdSettings {
  // Steps each worker takes between exchanges (1: every step,
  // the exact synchronous mode; 0: automatic, hub/policy/sync_period.h). Rounds
  // end at epoch ends, evaluations and checkpoints.
  int sync_every = 0;
  // The hub's update is v = m * v + average change, w += lr * v
  // (m 0 and lr 1: plain averaging).
  double outer_momentum = 0;
  double outer_lr = 1;
  // Workers compute the next round while a round's change and
  // average travel (worker/lookahead.h). Off by default: measured, it
  // saved little once auto had made the exchange ~5% of a round, and the
  // steps taken on stale weights cost about a point of accuracy
  // (docs/benchmarks.md, Wi-Fi).
  bool overlap_rounds = false;
  // FedProx's mu for the workers' local steps (core/train/local_sgd.h:
  // AddProximal); 0: plain local SGD.
  double prox_mu = 0;
  // Workers correct their local steps for the drift of their own data
  // (core/train/local_sgd.h: UpdateDrift), from the rounds' averages.
  // Needs plain averaging (outer momentum 0, outer lr 1).
  bool drift_correction = false;
  bool plain_averaging() const { return outer_momentum == 0 && outer_lr == 1; }
  // Whether workers are told to overlap (per-step runs have no rounds).
  bool rounds_overlap() const { return overlap_rounds && sync_every != 1; }
};

// The dashboard, /metrics and /api/status (hub/http/dashboard_server.h).
struct DashboardSettings {
  // 0: none. mthub's default is 8080; the struct's is 0, so hubs in tests
  // never bind it.
  int port = 0;
  // Named on the command line: a taken port is then fatal, not a warning.
  bool port_explicit = false;
  // Loopback unless asked: the hub's gRPC --bind is for workers, this for a
  // browser on the same machine (or an SSH tunnel) by default.
  std::string bind = "127.0.0.1";
  // Plain HTTP instead of TLS with the hub's certificate (also under
  // --insecure, where the hub has no certificate).
  bool plain = false;
};

// The run's settings shared with standalone training (core/train/
// run_settings.h), the hub process's own (core/train/process_settings.h:
// `threads` for averaging, the optimizer and evaluation; the trace holds
// the workers' spans too), and what only a hub has.
struct HubConfig : RunSettings, ProcessSettings {
  // Deliberately unlike standalone training's 0 (epoch ends only): a hub
  // run is long and spread over devices that come and go, and its
  // checkpoint is what a restarted hub resumes from.
  HubConfig() { checkpoint_every = 100; }

  int workers = 1;  // wait for this many before the first step
  std::string bind = "0.0.0.0";
  int port = 50051;          // 0: any free port (see Hub::port())
  DashboardSettings http;    // --http-port and its neighbours
  int64_t global_batch = 0;  // 0: 64 per worker (global_batch_or_default())
  // Fixed per-worker shares of the global batch in join order (tests and
  // benchmarks); empty: equal shares.
  std::vector<int> worker_batches;
  BatchPolicy batch_policy = BatchPolicy::kBalanced;
  // How workers' contributions are combined: auto | mean | trimmed-mean |
  // median (hub/aggregation/robust_aggregate.h), and auto's clipping radius as a
  // multiple of the step's median.
  Aggregation aggregate = Aggregation::kAuto;
  double clip_factor = 2;
  // The residual sketch's signs (hub/aggregation/sketch_seed.h): unset, each
  // hub draws its own, unknown to the workers; tests set it to repeat a run.
  std::optional<uint32_t> sketch_seed;
  int min_workers = 1;  // below this many the hub waits instead of training on
  int max_workers = 0;  // at most this many in the run at once; 0: twice --workers, at least 64
  // A worker's share of the default global batch (and, where the batch
  // follows the devices, the fastest worker's: Hub::FollowDevices).
  static constexpr int kBatchPerWorker = 64;
  // The samples of one step over all workers: --worker-batches' sum, else
  // --global-batch, else kBatchPerWorker per worker.
  int64_t global_batch_or_default() const {
    if (!worker_batches.empty()) {
      int64_t sum = 0;
      for (int b : worker_batches) sum += b;
      return sum;
    }
    return global_batch > 0 ? global_batch : kBatchPerWorker * static_cast<int64_t>(workers);
  }
  int max_workers_or_default() const {
    return max_workers > 0 ? max_workers : std::max(64, 2 * workers);
  }
  DeadlineSettings deadline;  // how long a step waits for its gradients
  // How rounds encode what they exchange, both directions; nullopt: auto,
  // chosen from the measured exchange (hub/policy/compression_choice.h).
  std::optional<Compression> compression;
  // Steps at the start of the run that use no encoding lossier than fp16
  // (hub/policy/compression_choice.h).
  int64_t compression_warmup_steps = 0;
  std::string token;
  tls::ServerOptions tls;  // TLS unless tls.insecure
  // A Train stream that has not said Hello by then is closed (a worker
  // says it at once; only a peer holding streams open stays silent).
  double hello_timeout_seconds = 10;
  std::string events_path;  // JSON lines of membership and run events (core/util/event_file.h)
  int digest_every = 10;
  LocalSgdSettings local_sgd;  // --sync-every and the rounds it makes
  // --dp-clip and its neighbours (hub/options/dp_flags.h); the Hub solves the
  // noise for --dp-epsilon once it knows the run's length.
  DpSettings dp;
  // --secure-aggregation: the hub learns only the sum of the updates
  // (core/secagg/, hub/secagg/; docs/security.md).
  bool secure_aggregation = false;
};

}  // namespace mt
