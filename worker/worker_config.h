#pragma once

#include <cstdint>
#include <string>

namespace mt {

struct WorkerConfig {
  std::string hub = "127.0.0.1:50051";  // HOST[:PORT]
  std::string name;                      // default: host name
  std::string device = "cpu";  // cpu | opencl | auto (worker/compute_devices.h)
  int64_t threads = 1;
  std::string data_dir;  // train on these local files instead of the hub's dataset
  std::string token;
  std::string report_path;
  double connect_timeout_seconds = 600;  // give up (re)joining after this long
  int64_t memory_budget_bytes = 0;       // for the model and its batch; 0: no limit
  // Benchmarks and tests only: each step takes this many times as long as
  // its computation did, to play a slower device on one machine.
  double slowdown = 1.0;
  double log_every_seconds = 5.0;
};

// Returns the process exit code.
int RunWorker(const WorkerConfig& config);

}  // namespace mt
