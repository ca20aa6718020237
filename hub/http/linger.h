// The dashboard without a run going on: after a run ends (mthub --linger,
// so people can look at the finished run before the hub exits), and for a
// finished run's report (mthub --serve-report). Both wait for a time or a
// stop request (SIGINT/SIGTERM through core/util/stop_signal.h).
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>

#include "hub/hub_config.h"

namespace mt {

class Linger {
 public:
  // Ends a Wait now or later (thread-safe; any number of times).
  void Stop();
  // Until `seconds` passed (-1: no end) or Stop was called.
  void Wait(int seconds);

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopped_ = false;
};

// Serves `report_path` (a hub's --report) as the dashboard, on the port and
// address `config.http` names with its TLS, until `linger` is stopped.
// Returns the exit code: 0, or 1 (said in the log) when the report cannot
// be read or the port is taken or off.
int ServeReport(const HubConfig& config, const std::string& report_path, Linger& linger);

}  // namespace mt
