#include "core/util/process_stats.h"

#include <sys/resource.h>

namespace mt {

int64_t PeakRssBytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<int64_t>(u.ru_maxrss) * 1024;  // KiB on Linux
}

}  // namespace mt
