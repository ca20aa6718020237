// A steady-state training step must not touch the allocator: every kernel
// a LeNet-5 step uses, counted through the malloc hook.
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstddef>
#include <vector>

#include "kernels/cpu/cpu_backend.h"
#include "tests/kernels/cpu_test_util.h"
#include "tests/kernels/lenet_step.h"
#include "tests/support/allocation_counter.h"

namespace mt::kernels {
namespace {

using ::mt::test_support::AllocationCounter;

TEST(CpuNoAlloc, HookSeesAllocations) {
#ifdef MT_NO_MALLOC_HOOK
  GTEST_SKIP() << "allocation hook needs glibc without sanitizers";
#endif
  AllocationCounter counter;
  auto* v = new std::vector<float>(100);
  delete v;
  EXPECT_GE(counter.count(), 2);  // the vector object and its storage
}

class CpuNoAllocTest : public ::testing::TestWithParam<int> {};

// Under sanitizers the steps still run (a memory check of the whole step on
// odd batch sizes); only the count is skipped.
TEST_P(CpuNoAllocTest, LeNetStepDoesNotAllocate) {
  for (int batch : {64, 1, 7}) {
    CpuBackend be(GetParam());
    test_support::LeNetStep step(be, batch);
    step.Run();  // first use: lazily initialised statics may allocate once
    AllocationCounter counter;
    for (int i = 0; i < 3; ++i) step.Run();
#ifndef MT_NO_MALLOC_HOOK
    EXPECT_EQ(counter.count(), 0) << "batch " << batch;
#endif
    EXPECT_TRUE(std::isfinite(step.loss()));
  }
}

TEST_P(CpuNoAllocTest, LargeGemmAndConvDoNotAllocate) {
#ifdef MT_NO_MALLOC_HOOK
  GTEST_SKIP() << "allocation hook needs glibc without sanitizers";
#endif
  CpuBackend be(GetParam());
  const int m = 700, n = 900, k = 1100;
  auto a = test_support::MakeBuffer(be, test_support::RandomVector(size_t(m) * k, 1));
  auto b = test_support::MakeBuffer(be, test_support::RandomVector(size_t(k) * n, 2));
  auto c = be.Allocate(size_t(m) * n);
  // CIFAR-sized convolutions take the im2col + GEMM path.
  const ConvGeometry g{8, 64, 32, 32, 64, 3, 2, 1};
  auto in =
      test_support::MakeBuffer(be, test_support::RandomVector(size_t(g.batch) * g.in_size(), 3));
  auto w = test_support::MakeBuffer(be, test_support::RandomVector(g.weight_count(), 4));
  auto bias = be.Allocate(g.out_c), out = be.Allocate(size_t(g.batch) * g.out_size());
  auto d_in = be.Allocate(in->count()), d_w = be.Allocate(w->count()), d_b = be.Allocate(g.out_c);
  auto ws = be.Allocate(be.ConvWorkspaceCount(g));
  auto run = [&] {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        be.Gemm(ta, tb, m, n, k, 1.0f, WholeOf(*a), WholeOf(*b), 0.0f, WholeOf(*c));
      }
    }
    be.Conv2dForward(g, WholeOf(*in), WholeOf(*w), WholeOf(*bias), WholeOf(*out), WholeOf(*ws));
    be.Conv2dBackward(g, WholeOf(*in), WholeOf(*w), WholeOf(*out), WholeOf(*d_in), WholeOf(*d_w),
                      WholeOf(*d_b), WholeOf(*ws));
  };
  run();
  AllocationCounter counter;
  run();
  EXPECT_EQ(counter.count(), 0);
}

INSTANTIATE_TEST_SUITE_P(Threads, CpuNoAllocTest, ::testing::Values(1, 3));

}  // namespace
}  // namespace mt::kernels
