#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tls/tls_options.h"
#include "worker/device_state.h"
#include "worker/hub_link.h"
#include "worker/worker_settings.h"

namespace mt {

// The worker's settings in both modes (worker/worker_settings.h) and what
// only training with a hub has.
struct WorkerConfig : WorkerSettings {
  std::string hub = "127.0.0.1:50051";  // HOST[:PORT]
  std::string name;                     // default: host name
  std::string data_dir;                 // train on these local files instead of the hub's dataset
  // Besides known names, the hub may name a dataset under one of these
  // (worker/join_reply_check.h: CheckHubDataset); empty: those in
  // $MT_ALLOW_DATA (DIR:DIR:...), if any.
  std::vector<std::string> allowed_data_dirs;
  std::string token;
  tls::ClientOptions tls;   // how the hub is trusted (TLS unless tls.insecure)
  std::string events_path;  // JSON lines of what happens with the hub (core/util/event_file.h)
  double connect_timeout_seconds = 600;  // give up (re)joining after this long
  int64_t memory_budget_bytes = 0;       // for the model and its batch; 0: no limit
  // Benchmarks and tests only: each step takes this many times as long as
  // its computation did, to play a slower device on one machine.
  double slowdown = 1.0;
  DevicePolicy policy;  // when to leave the run (battery, power, network, heat)
  // Read battery and temperature from /sys unless the embedder pushes them.
  bool read_system_device_state = true;
  double log_every_seconds = 5.0;
};

class WorkerControl;

// Trains with the hub until the run ends, the worker is stopped (signal or
// control), its device policy says leave, or the hub stays unreachable.
// Returns the process exit code; throws on errors (bad data, refusal).
// `decorate` wraps each session's link to the hub (test builds only).
int RunWorker(const WorkerConfig& config, WorkerControl& control,
              const HubLinkDecorator& decorate = nullptr);

}  // namespace mt
