#include "worker/slowdown_pacer.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "core/util/process_stats.h"

namespace mt {

double SlowdownPacer::Now() const {
  if (thread_cpu_) return ThreadCpuSeconds();
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void SlowdownPacer::Pay(double* since) const {
  if (active())
    std::this_thread::sleep_for(
        std::chrono::duration<double>((factor_ - 1) * std::max(0.0, Now() - *since)));
  *since = Now();
}

}  // namespace mt
