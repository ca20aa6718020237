// Counts every malloc-family call while an AllocationCounter is alive, by
// interposing on glibc's allocator (glibc only, and not under sanitizers,
// which bring their own). Include in exactly one file of a test binary.
#pragma once

#include <atomic>
#include <cerrno>
#include <cstddef>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) || \
    __has_feature(thread_sanitizer)
#define MT_NO_MALLOC_HOOK 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || !defined(__GLIBC__)
#define MT_NO_MALLOC_HOOK 1
#endif

namespace mt_alloc_hook {
inline std::atomic<bool> g_counting{false};
inline std::atomic<long> g_allocations{0};

inline void Count() {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1);
}
}  // namespace mt_alloc_hook

#ifndef MT_NO_MALLOC_HOOK
extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);

void* malloc(size_t n) {
  mt_alloc_hook::Count();
  return __libc_malloc(n);
}
void* calloc(size_t n, size_t size) {
  mt_alloc_hook::Count();
  return __libc_calloc(n, size);
}
void* realloc(void* p, size_t n) {
  mt_alloc_hook::Count();
  return __libc_realloc(p, n);
}
void* memalign(size_t align, size_t n) {
  mt_alloc_hook::Count();
  return __libc_memalign(align, n);
}
void* aligned_alloc(size_t align, size_t n) {
  mt_alloc_hook::Count();
  return __libc_memalign(align, n);
}
int posix_memalign(void** out, size_t align, size_t n) {
  mt_alloc_hook::Count();
  void* p = __libc_memalign(align, n);
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}
}  // extern "C"
#endif

namespace mt::test_support {

class AllocationCounter {
 public:
  AllocationCounter() {
    mt_alloc_hook::g_allocations.store(0);
    mt_alloc_hook::g_counting.store(true);
  }
  ~AllocationCounter() { mt_alloc_hook::g_counting.store(false); }
  long count() const { return mt_alloc_hook::g_allocations.load(); }
};

}  // namespace mt::test_support
