// mtworker --standalone: trains a model on this device alone, with the same
// engine the distributed worker uses and the training loop the hub runs
// (core/train/training_loop.h), its steps exchanging nothing.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "core/model/activation_precision.h"
#include "core/train/run_settings.h"
#include "worker/device_choice.h"

namespace mt {

// The run's settings (core/train/run_settings.h) and what only standalone
// training has.
struct StandaloneConfig : RunSettings {
  // Samples per step on this device (the hub's is a global batch, split).
  int64_t batch = 64;
  DeviceChoice device = DeviceChoice::kCpu;
  std::string state_dir;   // "": DefaultStateDir()
  bool profile = false;    // per-layer times, memory, CPU and energy (core/profile/)
  bool recompute = false;  // replay cheap layers instead of keeping their outputs
  // How the values the backward pass reads are kept (core/model/activation_precision.h).
  ActivationPrecision activation_precision = kDefaultActivationPrecision;
};

// Returns the process exit code: 0, or 1 when the trained model is no
// result (at chance or broken, core/train/model_health.h: the report says
// why, and no final model is written); throws on errors the caller reports
// (RunLengthError for --steps/--epochs that disagree). Ends early, with a
// checkpoint and a report, once *stop is set.
int RunStandalone(const StandaloneConfig& config, const std::atomic<bool>* stop = nullptr);

}  // namespace mt
