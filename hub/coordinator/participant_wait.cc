#include "hub/coordinator/participant_wait.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "hub/membership/churn_log.h"

namespace mt {

bool WaitForCount(std::unique_lock<std::mutex>& lock, std::condition_variable& cv, const bool& stop,
                  int needed, const std::function<int()>& count,
                  const std::function<void(int)>& say_why) {
  using Clock = std::chrono::steady_clock;
  auto last_log = Clock::now() - std::chrono::hours(1);
  for (;;) {
    const int n = count();
    if (n >= needed) return true;
    if (stop) return false;
    if (Clock::now() - last_log > std::chrono::seconds(10)) {
      say_why(n);
      last_log = Clock::now();
    }
    cv.wait_for(lock, std::chrono::seconds(1));
  }
}

void SayTooFewWorkers(int n, int min_workers, int64_t next_step) {
  if (n == 0)
    LogChurn(spdlog::level::warn, "no workers left; waiting for one to join");
  else
    LogChurn(spdlog::level::warn,
             fmt::format("{} worker(s) in the run, fewer than --min-workers {}: waiting for "
                         "more before step {}",
                         n, min_workers, next_step));
}

}  // namespace mt
