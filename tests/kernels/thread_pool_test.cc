#include "kernels/cpu/thread_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <iterator>
#include <thread>
#include <vector>

namespace mt::kernels {
namespace {

TEST(ThreadPool, CoversEveryIndexOnceInStaticChunks) {
  for (int threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.size(), threads);
    for (int64_t n : {1, 2, 3, 7, 8, 1000}) {
      std::vector<int> hits(n, 0);
      std::vector<int> owner(n, -1);
      const int chunks = pool.ParallelFor(n, [&](int64_t b, int64_t e, int w) {
        for (int64_t i = b; i < e; ++i) {
          ++hits[i];
          owner[i] = w;
        }
      });
      EXPECT_EQ(chunks, std::min<int64_t>(n, threads));
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i], 1);
      // Chunk w is [n*w/chunks, n*(w+1)/chunks): the split never depends on timing.
      for (int w = 0; w < chunks; ++w) {
        for (int64_t i = n * w / chunks; i < n * (w + 1) / chunks; ++i) ASSERT_EQ(owner[i], w);
      }
    }
  }
}

TEST(ThreadPool, ZeroItemsRunsNothing) {
  ThreadPool pool(3);
  int calls = 0;
  EXPECT_EQ(pool.ParallelFor(0, [&](int64_t, int64_t, int) { ++calls; }), 0);
  EXPECT_EQ(calls, 0);
}

TEST(ThreadPool, ManyShortJobsBackToBack) {
  ThreadPool pool(4);
  int64_t want = 0;
  std::atomic<int64_t> sum{0};
  std::atomic<int> bad_chunk{0};
  for (int rep = 0; rep < 20000; ++rep) {
    const int64_t n = 1 + rep % 7;  // fewer, as many and more items than threads
    want += n * (n + 1) / 2;
    const int chunks = pool.ParallelFor(n, [&](int64_t b, int64_t e, int c) {
      if (b != ThreadPool::ChunkBegin(n, std::min<int64_t>(n, 4), c)) bad_chunk++;
      for (int64_t i = b; i < e; ++i) sum.fetch_add(i + 1, std::memory_order_relaxed);
    });
    ASSERT_EQ(chunks, std::min<int64_t>(n, 4));
  }
  EXPECT_EQ(sum.load(), want);
  EXPECT_EQ(bad_chunk.load(), 0);
}

TEST(ThreadPool, NestedCallRunsItsChunksInlineInOrder) {
  ThreadPool pool(3);
  std::atomic<int> inner_total{0};
  pool.ParallelFor(3, [&](int64_t, int64_t, int) {
    const std::thread::id me = std::this_thread::get_id();
    std::vector<int> order;
    const int chunks = pool.ParallelFor(5, [&](int64_t b, int64_t e, int c) {
      EXPECT_EQ(std::this_thread::get_id(), me);
      EXPECT_EQ(b, ThreadPool::ChunkBegin(5, 3, c));
      EXPECT_EQ(e, ThreadPool::ChunkBegin(5, 3, c + 1));
      order.push_back(c);
      inner_total.fetch_add(static_cast<int>(e - b));
    });
    EXPECT_EQ(chunks, 3);
    EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
  });
  EXPECT_EQ(inner_total.load(), 15);
}

TEST(ThreadPool, ConcurrentCallersBothComplete) {
  ThreadPool pool(3);
  std::atomic<int64_t> total{0};
  auto work = [&] {
    for (int rep = 0; rep < 2000; ++rep) {
      pool.ParallelFor(10, [&](int64_t b, int64_t e, int) { total.fetch_add(e - b); });
    }
  };
  std::thread a(work), b(work);
  a.join();
  b.join();
  EXPECT_EQ(total.load(), 2 * 2000 * 10);
}

// Waits, bounded, until pred() holds; the pool's spinning is bounded in time,
// so every state these tests wait for comes well within the bound.
template <class Pred>
bool WaitUntil(Pred pred, double seconds = 10) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!pred()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

int ThreadsInThisProcess() {
  return static_cast<int>(std::distance(std::filesystem::directory_iterator("/proc/self/task"),
                                        std::filesystem::directory_iterator()));
}

TEST(ThreadPool, IdleHelpersBlockAndWakeAgain) {
  ThreadPool pool(3);
  pool.ParallelFor(3, [](int64_t, int64_t, int) {});
  // An idle pool stops spinning: both helpers end up asleep.
  ASSERT_TRUE(WaitUntil([&] { return pool.BlockedHelpers() == 2; })) << pool.BlockedHelpers();

  // Sleeping helpers wake for the next loop. A chunk the caller runs waits
  // until two others have run on other threads; helpers that did not wake
  // would leave them to the caller after the bound, and `elsewhere` at 0.
  // (A quick helper may also take the caller's first chunk: then all three
  // run elsewhere.)
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> elsewhere{0};
  pool.ParallelFor(3, [&](int64_t, int64_t, int) {
    if (std::this_thread::get_id() != caller) {
      elsewhere++;
      return;
    }
    WaitUntil([&] { return elsewhere.load() == 2; });
  });
  EXPECT_GE(elsewhere.load(), 2);
  EXPECT_TRUE(WaitUntil([&] { return pool.BlockedHelpers() == 2; })) << pool.BlockedHelpers();
}

TEST(ThreadPool, DestroyJoinsEveryHelperWhetherSpinningOrAsleep) {
  const int before = ThreadsInThisProcess();
  for (int i = 0; i < 20; ++i) {
    {
      ThreadPool pool(4);
      ASSERT_EQ(ThreadsInThisProcess(), before + 3);
      if (i % 2) {
        pool.ParallelFor(8, [](int64_t, int64_t, int) {});  // helpers still spinning
      } else {
        ASSERT_TRUE(WaitUntil([&] { return pool.BlockedHelpers() == 3; }));  // helpers asleep
      }
    }
    // The kernel lists a joined thread for a moment after it has exited.
    ASSERT_TRUE(WaitUntil([&] { return ThreadsInThisProcess() == before; }, 2))
        << ThreadsInThisProcess() - before << " helper threads outlived their pool";
  }
}

}  // namespace
}  // namespace mt::kernels
