// A steady-clock duration in seconds, as logs, reports and deadlines use it.
#pragma once

#include <chrono>

namespace mt {

inline double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace mt
