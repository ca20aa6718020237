// Waiting for enough workers to take a round: before the run (--workers)
// and whenever fewer than --min-workers are left.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>

namespace mt {

// Waits on `cv`, `lock` held, until `count()` reaches `needed`; false when
// `stop` is set first. `say_why(n)` logs how many there are, at once and
// every 10 s after. Waiters are woken by every join, stream and stop; the
// timeout only paces the log.
bool WaitForCount(std::unique_lock<std::mutex>& lock, std::condition_variable& cv, const bool& stop,
                  int needed, const std::function<int()>& count,
                  const std::function<void(int)>& say_why);

// Fewer than --min-workers `min_workers` (n of them) before step
// `next_step`: said again each time workers come and go, as their churn is.
void SayTooFewWorkers(int n, int min_workers, int64_t next_step);

}  // namespace mt
