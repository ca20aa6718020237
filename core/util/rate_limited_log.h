// Says whether to log an event that a peer can cause at will (a refused
// join, a stream closed for silence): at most `burst` lines per period,
// the next one logged saying how many were left out, so a flood cannot
// fill the disk or bury the log.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>

namespace mt {

class RateLimitedLog {
 public:
  explicit RateLimitedLog(std::chrono::milliseconds period = std::chrono::seconds(10),
                          int burst = 1)
      : period_(period), burst_(burst) {}

  // True when this event should be logged; *suppressed then holds how many
  // were left out since the last logged one. Thread-safe.
  bool ShouldLog(int64_t* suppressed) {
    const auto now = std::chrono::steady_clock::now();
    std::lock_guard<std::mutex> lock(mu_);
    if (!logged_once_ || now - window_start_ >= period_) {
      logged_once_ = true;
      window_start_ = now;
      logged_in_window_ = 0;
    }
    if (logged_in_window_ >= burst_) {
      ++suppressed_;
      return false;
    }
    ++logged_in_window_;
    *suppressed = suppressed_;
    suppressed_ = 0;
    return true;
  }

 private:
  const std::chrono::milliseconds period_;
  const int burst_;
  std::mutex mu_;
  bool logged_once_ = false;
  std::chrono::steady_clock::time_point window_start_;
  int logged_in_window_ = 0;
  int64_t suppressed_ = 0;
};

}  // namespace mt
