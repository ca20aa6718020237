// A persistent pool for the CPU backend: threads-1 helper threads plus the
// calling thread share one loop at a time. Training runs dozens of short ops
// per step, so starting a loop must cost well under a microsecond: helpers
// spin for a short while after each loop before they block on a condvar, and
// a call allocates nothing (the loop body is passed by reference, not wrapped
// in a std::function).
//
// A loop is cut into fixed chunks, at most one per thread. Thread t (the
// caller is 0) first claims chunk t, so consecutive ops over the same data
// find it in the same core's cache; then any chunk still unclaimed. So a
// helper that the OS has descheduled (a phone busy with other apps, a shared
// build machine) delays nothing: the others run its chunk. And because the
// chunks, not the threads, are fixed, a caller that keeps one partial result
// per chunk and reduces them in chunk order gets the same bits however the
// chunks were scheduled.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace mt::kernels {

class ThreadPool {
 public:
  // threads is clamped to [1, kMaxThreads]; 1 means no helpers.
  explicit ThreadPool(int threads);
  static constexpr int kMaxThreads = 32;
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return size_; }

  // Cuts [0, n) into min(n, size()) chunks, chunk c being
  // [ChunkBegin(n, chunks, c), ChunkBegin(n, chunks, c + 1)), and calls
  // fn(begin, end, c) once for each, on any of the pool's threads. Returns the
  // number of chunks once all are done. At most size() chunks run at once, and
  // each chunk number is used by one call only, so per-chunk scratch indexed
  // by c is never shared. A nested call, or one made while another thread is
  // using the pool, runs its chunks one after another on the caller, with the
  // same boundaries. fn must not throw.
  template <class Fn>
  int ParallelFor(int64_t n, Fn&& fn) {
    if (n <= 0) return 0;
    using F = std::remove_reference_t<Fn>;
    return Run(
        n, [](void* ctx, int64_t b, int64_t e, int c) { (*static_cast<F*>(ctx))(b, e, c); },
        const_cast<void*>(static_cast<const void*>(&fn)));
  }

  static int64_t ChunkBegin(int64_t n, int chunks, int c) { return n * c / chunks; }

  // Helpers that have stopped spinning and sleep until the next loop: an idle
  // pool must not keep burning cores that other apps need (tests read it).
  int BlockedHelpers() const { return blocked_.load(std::memory_order_acquire); }

 private:
  using Task = void (*)(void* ctx, int64_t begin, int64_t end, int chunk);

  int Run(int64_t n, Task task, void* ctx);
  // Claims and runs one chunk of loop `generation`, chunk `self` if still
  // free; false when nothing was left to claim.
  bool RunChunk(uint32_t generation, int self);
  void HelperLoop(int self);

  const int size_;
  std::vector<std::thread> helpers_;

  std::mutex run_mu_;  // one loop at a time; other callers run inline

  // The loop being run. Written before claim_ and generation_ are published
  // (release) and read only by a thread that has claimed one of its chunks,
  // which keeps the loop, so these fields, alive until that chunk is done.
  Task task_ = nullptr;
  void* ctx_ = nullptr;
  int64_t n_ = 0;

  // Everything a claim decides on, in one word, so it is never mixed across
  // loops: the loop's generation (bits 40-63, low 24 bits of generation_),
  // its chunk count (bits 32-39) and a bit per claimed chunk (bits 0-31). A
  // helper that wakes after its loop ended then cannot claim a chunk of the
  // next one.
  std::atomic<uint64_t> claim_{0};
  std::atomic<int> finished_{0};  // chunks of the current loop that are done
  std::atomic<uint32_t> generation_{0};
  std::atomic<bool> stop_{false};
  std::atomic<int> blocked_{0};  // helpers inside wake_cv_.wait

  std::mutex mu_;  // guards the condvar waits only
  std::condition_variable wake_cv_;
  std::condition_variable done_cv_;
};

}  // namespace mt::kernels
