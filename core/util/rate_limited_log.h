// Says whether to log an event that a peer can cause at will (a refused
// join, a stream closed for silence): at most one line per period, with the
// number left out since the last, so a flood cannot fill the disk or bury
// the log.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>

namespace mt {

class RateLimitedLog {
 public:
  explicit RateLimitedLog(std::chrono::milliseconds period = std::chrono::seconds(10))
      : period_(period) {}

  // True when this event should be logged; *suppressed then holds how many
  // were left out since the last logged one. Thread-safe.
  bool ShouldLog(int64_t* suppressed) {
    const auto now = std::chrono::steady_clock::now();
    std::lock_guard<std::mutex> lock(mu_);
    if (logged_once_ && now - last_ < period_) {
      ++suppressed_;
      return false;
    }
    logged_once_ = true;
    last_ = now;
    *suppressed = suppressed_;
    suppressed_ = 0;
    return true;
  }

 private:
  const std::chrono::milliseconds period_;
  std::mutex mu_;
  bool logged_once_ = false;
  std::chrono::steady_clock::time_point last_;
  int64_t suppressed_ = 0;
};

}  // namespace mt
