// The resident memory of another process (a hub started by a test), as the
// kernel counts it now: VmRSS of /proc/PID/status.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <fstream>
#include <string>

namespace mt::test_support {

// In bytes; -1 if unreadable.
inline int64_t RssBytes(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string key;
  int64_t kib = -1;
  while (in >> key) {
    if (key == "VmRSS:") {
      in >> kib;
      break;
    }
  }
  return kib < 0 ? -1 : kib * 1024;
}

}  // namespace mt::test_support
