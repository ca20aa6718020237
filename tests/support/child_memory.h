// Runs a piece of a test in a forked child and reports its peak resident
// memory: for asserting that work on hostile input stays bounded, where the
// bound is the point and a failure must not take the machine's memory
// with it (the child's address space is capped, so an unbounded allocation
// there ends in std::bad_alloc, a failed test, not an out-of-memory kill).
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <functional>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define MT_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define MT_TEST_SANITIZED 1
#endif
#endif

namespace mt::test_support {

struct ChildMemory {
  int exit_code = -1;       // body's return value; 99 for an exception escaping it
  long peak_growth_mb = 0;  // peak RSS above the parent's at the fork
};

// The parent's resident and virtual memory now, in MB.
inline void SelfMemoryMb(long& rss_mb, long& vm_mb) {
  long vm_pages = 0, rss_pages = 0;
  if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &vm_pages, &rss_pages) != 2) vm_pages = rss_pages = 0;
    std::fclose(f);
  }
  const long page_kb = sysconf(_SC_PAGESIZE) / 1024;
  rss_mb = rss_pages * page_kb / 1024;
  vm_mb = vm_pages * page_kb / 1024;
}

// `body` in a child whose address space may grow by `cap_mb` (not capped
// under AddressSanitizer, whose shadow memory needs terabytes of it).
inline ChildMemory RunInChild(const std::function<int()>& body, long cap_mb) {
  long rss_mb = 0, vm_mb = 0;
  SelfMemoryMb(rss_mb, vm_mb);
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
#ifndef MT_TEST_SANITIZED
    const rlim_t cap = static_cast<rlim_t>(vm_mb + cap_mb) << 20;
    const rlimit limit{cap, cap};
    setrlimit(RLIMIT_AS, &limit);
#endif
    int code = 99;
    try {
      code = body();
    } catch (...) {
    }
    _exit(code);
  }
  ChildMemory r;
  int status = 0;
  rusage usage{};
  if (pid > 0 && wait4(pid, &status, 0, &usage) == pid) {
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.peak_growth_mb = usage.ru_maxrss / 1024 - rss_mb;  // ru_maxrss: KB on Linux
  }
  return r;
}

}  // namespace mt::test_support
