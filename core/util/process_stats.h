#pragma once

#include <cstdint>

namespace mt {

// Peak resident set size of this process, in bytes (getrusage's ru_maxrss).
int64_t PeakRssBytes();

// CPU time of the calling thread: the work itself, which wall time on a
// busy machine would overstate by the time other processes held the core.
double ThreadCpuSeconds();
// CPU time of the whole process, all its threads.
double ProcessCpuSeconds();

}  // namespace mt
