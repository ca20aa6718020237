#include "kernels/cpu/thread_pool.h"

#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace mt::kernels {
namespace {

// Set while a thread runs a chunk, so a nested ParallelFor runs inline instead
// of waiting for helpers that may be busy running its parent.
thread_local bool t_in_pool = false;

// Long enough to bridge the gap between consecutive ops of a training step
// (microseconds), short enough that an idle pool soon stops burning a core
// that other processes need. Measured in time, not iterations: a pause
// instruction takes ~1 ns on some cores and ~20 ns on others.
constexpr std::chrono::microseconds kSpinTime{50};

// The fields of ThreadPool::claim_.
constexpr int kGenerationShift = 40;
constexpr int kChunksShift = 32;
constexpr uint64_t kGenerationMask = (uint64_t{1} << 24) - 1;

uint64_t ClaimWord(uint32_t generation, int chunks) {
  return (uint64_t{generation} & kGenerationMask) << kGenerationShift | uint64_t(chunks)
                                                                            << kChunksShift;
}

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// Spins until done() or kSpinTime has passed; returns done().
template <class Done>
bool SpinUntil(Done done) {
  const auto deadline = std::chrono::steady_clock::now() + kSpinTime;
  for (;;) {
    for (int i = 0; i < 32; ++i) {
      if (done()) return true;
      CpuRelax();
    }
    if (std::chrono::steady_clock::now() >= deadline) return done();
  }
}

}  // namespace

ThreadPool::ThreadPool(int threads)
    : size_(threads < 1 ? 1 : (threads > kMaxThreads ? kMaxThreads : threads)) {
  helpers_.reserve(size_ - 1);
  for (int i = 1; i < size_; ++i) helpers_.emplace_back([this, i] { HelperLoop(i); });
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
    for (int c = 0; c < chunks; ++c) {
      task(ctx, ChunkBegin(n, chunks, c), ChunkBegin(n, chunks, c + 1), c);
    }
    return chunks;
  }

  task_ = task;
  ctx_ = ctx;
  n_ = n;
  finished_.store(0, std::memory_order_relaxed);
  const uint32_t gen = generation_.load(std::memory_order_relaxed) + 1;
  claim_.store(ClaimWord(gen, chunks), std::memory_order_release);
  {
    // Publishing under mu_ means a helper about to block cannot miss it.
    std::lock_guard<std::mutex> lock(mu_);
    generation_.store(gen, std::memory_order_release);
  }
  wake_cv_.notify_all();

  t_in_pool = true;
  while (RunChunk(gen, 0)) {
  }
  t_in_pool = false;

  if (SpinUntil([&] { return finished_.load(std::memory_order_acquire) == chunks; })) {
    return chunks;
  }
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [&] { return finished_.load(std::memory_order_acquire) == chunks; });
  return chunks;
}

bool ThreadPool::RunChunk(uint32_t generation, int self) {
  uint64_t claim = claim_.load(std::memory_order_acquire);
  for (;;) {
    if ((claim >> kGenerationShift) != (generation & kGenerationMask)) return false;
    const int chunks = static_cast<int>((claim >> kChunksShift) & 0xff);
    const uint32_t all = chunks >= 32 ? ~0u : (1u << chunks) - 1u;
    const uint32_t free = all & ~static_cast<uint32_t>(claim);
    if (free == 0) return false;
    const int chunk = (free >> self) & 1u ? self : __builtin_ctz(free);
    if (claim_.compare_exchange_weak(claim, claim | (uint64_t{1} << chunk),
                                     std::memory_order_acq_rel, std::memory_order_acquire)) {
      // A chunk of this loop is now ours, so the loop cannot end, nor its
      // fields be overwritten, before we are done.
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

void ThreadPool::HelperLoop(int self) {
  uint32_t seen = 0;
  for (;;) {
    uint32_t gen = seen;
    SpinUntil([&] {
      gen = generation_.load(std::memory_order_acquire);
      return gen != seen;
    });
    if (gen == seen) {
      std::unique_lock<std::mutex> lock(mu_);
      blocked_.fetch_add(1, std::memory_order_release);
      wake_cv_.wait(lock, [&] {
        gen = generation_.load(std::memory_order_acquire);
        return gen != seen;
      });
      blocked_.fetch_sub(1, std::memory_order_release);
    }
    seen = gen;
    if (stop_.load(std::memory_order_relaxed)) return;
    t_in_pool = true;
    while (RunChunk(gen, self)) {
    }
    t_in_pool = false;
  }
}

}  // namespace mt::kernels
