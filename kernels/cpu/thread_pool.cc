#include "kernels/cpu/thread_pool.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace mt::kernels {
namespace {

// Set while a thread runs a chunk, so a nested ParallelFor runs inline instead
// of waiting for helpers that may be busy running its parent.
thread_local bool t_in_pool = false;

// Long enough to bridge the gap between consecutive ops of a training step
// (tens of microseconds), short enough that an idle pool soon stops burning a
// core that other processes need.
constexpr int kSpinIterations = 20000;

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

constexpr uint64_t kChunkMask = 0xffffffffull;

}  // namespace

ThreadPool::ThreadPool(int threads) : size_(threads < 1 ? 1 : threads) {
  helpers_.reserve(size_ - 1);
  for (int i = 1; i < size_; ++i) helpers_.emplace_back([this] { HelperLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_.store(true, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_cv_.notify_all();
  for (std::thread& t : helpers_) {
    if (t.joinable()) t.join();
  }
}

int ThreadPool::Run(int64_t n, Task task, void* ctx) {
  const int chunks = n < size_ ? static_cast<int>(n) : size_;
  std::unique_lock<std::mutex> run_lock(run_mu_, std::defer_lock);
  if (chunks == 1 || t_in_pool || !run_lock.try_lock()) {
    for (int c = 0; c < chunks; ++c) task(ctx, ChunkBegin(n, chunks, c), ChunkBegin(n, chunks, c + 1), c);
    return chunks;
  }

  task_ = task;
  ctx_ = ctx;
  n_ = n;
  chunks_ = chunks;
  finished_.store(0, std::memory_order_relaxed);
  const uint32_t gen = generation_.load(std::memory_order_relaxed) + 1;
  claim_.store(uint64_t{gen} << 32, std::memory_order_release);
  {
    // Publishing under mu_ means a helper about to block cannot miss it.
    std::lock_guard<std::mutex> lock(mu_);
    generation_.store(gen, std::memory_order_release);
  }
  wake_cv_.notify_all();

  t_in_pool = true;
  while (RunChunks(gen)) {
  }
  t_in_pool = false;

  for (int i = 0; i < kSpinIterations; ++i) {
    if (finished_.load(std::memory_order_acquire) == chunks) return chunks;
    CpuRelax();
  }
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [&] { return finished_.load(std::memory_order_acquire) == chunks; });
  return chunks;
}

bool ThreadPool::RunChunks(uint32_t generation) {
  uint64_t claim = claim_.load(std::memory_order_acquire);
  for (;;) {
    if (static_cast<uint32_t>(claim >> 32) != generation) return false;
    const int chunk = static_cast<int>(claim & kChunkMask);
    // chunks_ belongs to this generation: it was written before claim_.
    const int chunks = chunks_;
    if (chunk >= chunks) return false;
    if (claim_.compare_exchange_weak(claim, claim + 1, std::memory_order_acq_rel,
                                     std::memory_order_acquire)) {
      task_(ctx_, ChunkBegin(n_, chunks, chunk), ChunkBegin(n_, chunks, chunk + 1), chunk);
      if (finished_.fetch_add(1, std::memory_order_acq_rel) + 1 == chunks) {
        // Taking mu_ orders this notify after the caller's predicate check,
        // so a caller that has just decided to block still sees it.
        std::lock_guard<std::mutex> lock(mu_);
        done_cv_.notify_one();
      }
      return true;
    }
  }
}

void ThreadPool::HelperLoop() {
  uint32_t seen = 0;
  for (;;) {
    uint32_t gen = generation_.load(std::memory_order_acquire);
    for (int i = 0; gen == seen && i < kSpinIterations; ++i) {
      CpuRelax();
      gen = generation_.load(std::memory_order_acquire);
    }
    if (gen == seen) {
      std::unique_lock<std::mutex> lock(mu_);
      wake_cv_.wait(lock, [&] {
        gen = generation_.load(std::memory_order_acquire);
        return gen != seen;
      });
    }
    seen = gen;
    if (stop_.load(std::memory_order_relaxed)) return;
    t_in_pool = true;
    while (RunChunks(gen)) {
    }
    t_in_pool = false;
  }
}

}  // namespace mt::kernels
