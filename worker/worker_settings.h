// What an mtworker has in both modes, bound to its flags once
// (worker/worker_options.cc): how this device computes and what it writes.
// WorkerConfig (--hub) and StandaloneConfig (--standalone) both extend it,
// so the two modes cannot read a shared flag differently.
#pragma once

#include "core/model/activation_precision.h"
#include "core/train/process_settings.h"
#include "worker/device_choice.h"

namespace mt {

struct WorkerSettings : ProcessSettings {
  DeviceChoice device = DeviceChoice::kCpu;
  bool profile = false;  // per-layer times, memory, CPU and energy (core/profile/)
  // Replay cheap layers instead of keeping their outputs; with a hub, on
  // anyway when the memory budget would otherwise not hold the hub's batch.
  bool recompute = false;
  // How the values the backward pass reads are kept between the passes
  // (core/model/activation_precision.h): a device's own memory choice, like
  // recompute (a hub does not send it).
  ActivationPrecision activation_precision = kDefaultActivationPrecision;
};

}  // namespace mt
