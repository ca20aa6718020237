#include "core/util/process_stats.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <ctime>

namespace mt {
namespace {

double CpuSeconds(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// The value of "Key:   123 kB" in /proc/self/status text, in bytes; -1 if absent.
int64_t StatusKibibytes(const char* text, const char* key) {
  const char* at = std::strstr(text, key);
  if (at == nullptr) return -1;
  return std::strtoll(at + std::strlen(key), nullptr, 10) * 1024;
}

// The start of a small /proc file into `text`, terminated; false if unreadable.
bool ReadProcFile(const char* path, char (&text)[8192]) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  size_t used = 0;
  for (ssize_t got;
       used + 1 < sizeof text && (got = read(fd, text + used, sizeof text - 1 - used)) > 0;)
    used += static_cast<size_t>(got);
  close(fd);
  text[used] = '\0';
  return true;
}

}  // namespace

ResidentMemory ReadResidentMemory() {
  ResidentMemory m;
  char text[8192];  // the file is about 1.5 KB
  if (!ReadProcFile("/proc/self/status", text)) return m;
  m.current_bytes = StatusKibibytes(text, "\nVmRSS:");
  m.peak_bytes = StatusKibibytes(text, "\nVmHWM:");
  return m;
}

int64_t AvailableMemoryBytes() {
  char text[8192];  // /proc/meminfo is about 1.5 KB; MemAvailable is its third line
  if (!ReadProcFile("/proc/meminfo", text)) return -1;
  return StatusKibibytes(text, "\nMemAvailable:");
}

int64_t PeakRssBytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<int64_t>(u.ru_maxrss) * 1024;  // KiB on Linux
}

double ThreadCpuSeconds() { return CpuSeconds(CLOCK_THREAD_CPUTIME_ID); }
double ProcessCpuSeconds() { return CpuSeconds(CLOCK_PROCESS_CPUTIME_ID); }

}  // namespace mt
