#pragma once

#include <cstdint>

namespace mt {

// Peak resident set size of this process, in bytes (getrusage's ru_maxrss).
int64_t PeakRssBytes();

// This process's memory as the kernel counts it (/proc/self/status): the
// resident set now (VmRSS) and its high-water mark (VmHWM), in bytes; -1 each
// where unreadable. Unlike ru_maxrss, VmHWM starts afresh at exec, so a
// child re-executed to measure one configuration sees only its own peak.
// Allocates nothing.
struct ResidentMemory {
  int64_t current_bytes = -1;
  int64_t peak_bytes = -1;
};
ResidentMemory ReadResidentMemory();

// Memory the kernel says could be given to a new program without swapping
// (MemAvailable in /proc/meminfo), in bytes; -1 where unreadable.
int64_t AvailableMemoryBytes();

// CPU time of the calling thread: the work itself, which wall time on a
// busy machine would overstate by the time other processes held the core.
double ThreadCpuSeconds();
// CPU time of the whole process, all its threads.
double ProcessCpuSeconds();

}  // namespace mt
