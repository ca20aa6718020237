#include "kernels/cpu/thread_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
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

TEST(ThreadPool, IdleHelpersBlockAndWakeAgain) {
  ThreadPool pool(2);
  std::atomic<int> count{0};
  pool.ParallelFor(2, [&](int64_t, int64_t, int) { count++; });
  // Long enough for the helpers to stop spinning and block on the condvar.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  pool.ParallelFor(2, [&](int64_t, int64_t, int) { count++; });
  EXPECT_EQ(count.load(), 4);
}

TEST(ThreadPool, DestroyWhileIdleJoinsCleanly) {
  for (int i = 0; i < 50; ++i) {
    ThreadPool pool(4);
    if (i % 2) pool.ParallelFor(8, [](int64_t, int64_t, int) {});
  }
}

}  // namespace
}  // namespace mt::kernels
