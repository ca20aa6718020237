#pragma once

#include <cstdint>

namespace mt {

// Peak resident set size of this process, in bytes (getrusage's ru_maxrss).
int64_t PeakRssBytes();

}  // namespace mt
