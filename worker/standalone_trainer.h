// mtworker --standalone: trains a model on this device alone, with the same
// engine the distributed worker uses and the training loop the hub runs
// (core/train/training_loop.h), its steps exchanging nothing.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "core/train/run_settings.h"
#include "worker/worker_settings.h"

namespace mt {

// The run's settings (core/train/run_settings.h), the worker's in both
// modes (worker/worker_settings.h) and what only standalone training has.
struct StandaloneConfig : RunSettings, WorkerSettings {
  // Samples per step on this device (the hub's is a global batch, split).
  int64_t batch = 64;
  std::string state_dir;  // "": DefaultStateDir()
};

// Returns the process exit code: 0, or 1 when the trained model is no
// result (at chance or broken, core/train/model_health.h: the report says
// why, and no final model is written); throws on errors the caller reports
// (RunLengthError for --steps/--epochs that disagree). Ends early, with a
// checkpoint and a report, once *stop is set.
int RunStandalone(const StandaloneConfig& config, const std::atomic<bool>* stop = nullptr);

}  // namespace mt
