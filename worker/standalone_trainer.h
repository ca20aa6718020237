// mtworker --standalone: trains a model on this device alone, with the same
// engine the distributed worker uses.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "core/model/fine_tuning.h"
#include "core/optim/optimizer.h"

namespace mt {

struct StandaloneConfig {
  std::string model = "lenet5";
  std::string dataset = "fashion-mnist";
  std::string device = "cpu";  // cpu | opencl | auto (worker/compute_devices.h)
  int64_t batch = 64;
  int64_t epochs = 0;     // 0: as many as max_steps needs, else 1
  int64_t max_steps = 0;  // 0: whole epochs
  int64_t threads = 1;
  uint64_t seed = 1;
  OptimizerConfig optimizer;
  std::string checkpoint_dir;
  int64_t checkpoint_every = 0;  // steps; 0: at each epoch end only
  bool resume = false;
  FineTuning tuning;        // --init-from, --freeze, --train-only
  std::string export_path;  // "": final model to the checkpoint dir or state_dir/models
  std::string state_dir;    // "": DefaultStateDir()
  std::string report_path;
  std::string trace_path;  // Chrome trace of the run (worker/worker_trace.h); "": none
  double log_every_seconds = 2.0;
  bool profile = false;  // per-layer times, memory, CPU and energy (core/profile/)
};

// Returns the process exit code; throws on errors the caller reports
// (RunLengthError for --steps/--epochs that disagree). Ends early, with a
// checkpoint and a report, once *stop is set.
int RunStandalone(const StandaloneConfig& config, const std::atomic<bool>* stop = nullptr);

}  // namespace mt
