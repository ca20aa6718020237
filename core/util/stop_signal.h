// SIGINT/SIGTERM as a stop request to one object: the handler only sets a
// flag (all a signal handler may safely do) and a watcher thread turns it
// into a call of the owner's stop function, so a run ends at a step
// boundary (checkpoint, report, goodbye) instead of mid-write, and stopping
// one hub or worker never stops another in the same process.
#pragma once

#include <atomic>
#include <functional>
#include <thread>

namespace mt {

class StopOnSignals {
 public:
  // Installs the handlers; on_stop runs on the watcher thread, once.
  explicit StopOnSignals(std::function<void()> on_stop);
  ~StopOnSignals();
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;

 private:
  std::atomic<bool> done_{false};
  std::thread watcher_;
};

}  // namespace mt
