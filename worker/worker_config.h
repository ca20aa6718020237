#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/model/activation_precision.h"
#include "tls/tls_options.h"
#include "worker/device_choice.h"
#include "worker/device_state.h"
#include "worker/hub_link.h"

namespace mt {

struct WorkerConfig {
  std::string hub = "127.0.0.1:50051";  // HOST[:PORT]
  std::string name;                     // default: host name
  DeviceChoice device = DeviceChoice::kCpu;
  int64_t threads = 1;
  std::string data_dir;  // train on these local files instead of the hub's dataset
  // Besides known names, the hub may name a dataset under one of these
  // (worker/join_reply_check.h: CheckHubDataset); empty: those in
  // $MT_ALLOW_DATA (DIR:DIR:...), if any.
  std::vector<std::string> allowed_data_dirs;
  std::string token;
  tls::ClientOptions tls;  // how the hub is trusted (TLS unless tls.insecure)
  std::string report_path;
  std::string events_path;  // JSON lines of what happens with the hub (core/util/event_file.h)
  std::string trace_path;   // this worker's own Chrome trace (worker/worker_trace.h); "": none
  double connect_timeout_seconds = 600;  // give up (re)joining after this long
  int64_t memory_budget_bytes = 0;       // for the model and its batch; 0: no limit
  // Benchmarks and tests only: each step takes this many times as long as
  // its computation did, to play a slower device on one machine.
  double slowdown = 1.0;
  DevicePolicy policy;  // when to leave the run (battery, power, network, heat)
  // Read battery and temperature from /sys unless the embedder pushes them.
  bool read_system_device_state = true;
  double log_every_seconds = 5.0;
  bool profile = false;  // per-layer times, memory, CPU and energy (core/profile/)
  // Replay cheap layers instead of keeping their outputs; on anyway when
  // the memory budget would otherwise not hold the hub's batch.
  bool recompute = false;
  // How the values the backward pass reads are kept between the passes: a
  // device's own memory choice, like recompute (the hub does not send it).
  ActivationPrecision activation_precision = kDefaultActivationPrecision;
};

class WorkerControl;

// Trains with the hub until the run ends, the worker is stopped (signal or
// control), its device policy says leave, or the hub stays unreachable.
// Returns the process exit code; throws on errors (bad data, refusal).
// `decorate` wraps each session's link to the hub (test builds only).
int RunWorker(const WorkerConfig& config, WorkerControl& control,
              const HubLinkDecorator& decorate = nullptr);

}  // namespace mt
