// Charges the hub's own work in a scope to RunMetrics: its thread's CPU
// time to one of the per-step figures (reduce_seconds, broadcast_seconds)
// and its wall time to wall_seconds.
#pragma once

#include <chrono>

#include "core/util/process_stats.h"
#include "core/util/seconds.h"

namespace mt {

class HubWorkTimer {
 public:
  HubWorkTimer(double& cpu_seconds, double& wall_seconds)
      : cpu_seconds_(cpu_seconds), wall_seconds_(wall_seconds) {}
  ~HubWorkTimer() {
    cpu_seconds_ += ThreadCpuSeconds() - cpu_start_;
    wall_seconds_ += Seconds(std::chrono::steady_clock::now() - wall_start_);
  }
  HubWorkTimer(const HubWorkTimer&) = delete;
  HubWorkTimer& operator=(const HubWorkTimer&) = delete;

 private:
  double& cpu_seconds_;
  double& wall_seconds_;
  const double cpu_start_ = ThreadCpuSeconds();
  const std::chrono::steady_clock::time_point wall_start_ = std::chrono::steady_clock::now();
};

}  // namespace mt
