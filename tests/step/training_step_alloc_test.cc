// The whole steady-state step as the daemons run it (fill a batch, copy it
// in, forward, loss, backward, optimizer update) must not touch the
// allocator, for full and short batches, with SGD and Adam.
#include <gtest/gtest.h>

#include <cmath>

#include "core/data/sampler.h"
#include "core/model/model_spec.h"
#include "core/optim/optimizer.h"
#include "core/train/batch_buffer.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/support/allocation_counter.h"
#include "tests/support/synthetic_dataset.h"

namespace mt {
namespace {

class TrainingStepAlloc : public ::testing::TestWithParam<const char*> {};

TEST_P(TrainingStepAlloc, LeNetStepAllocatesNothing) {
  for (int threads : {1, 2}) {
    kernels::CpuBackend backend(threads);
    auto model = BuildModel(LoadModelSpec("lenet5"), backend);
    const int capacity = 64;
    model->Reserve(capacity);
    model->InitParams(1);
    OptimizerConfig oc;
    oc.kind = GetParam();
    auto opt = MakeOptimizer(oc, backend, model->ParamCount());
    test_support::SyntheticDataset data(512, model->input_shape(), 10, 3);
    BatchBuffer batch(data.SampleShape(), capacity);
    const auto order = EpochOrder(data.Size(), 1, 0);
    int step = 0;
    auto run = [&](int n) {
      batch.Fill(data, order.data() + (step * capacity) % 448, n);
      model->SetBatch(batch.images(), batch.labels(), n);
      const double loss = model->ComputeGradients(step++);
      opt->Step(model->params(), model->grads());
      return loss;
    };
    run(capacity);  // first use: lazily initialised statics may allocate once
    run(17);
    test_support::AllocationCounter counter;
    double loss = 0;
    for (int n : {64, 64, 17, 1, 64}) loss += run(n);
#ifndef MT_NO_MALLOC_HOOK
    EXPECT_EQ(counter.count(), 0) << GetParam() << ", " << threads << " thread(s)";
#endif
    EXPECT_TRUE(std::isfinite(loss));
  }
}

INSTANTIATE_TEST_SUITE_P(Optimizers, TrainingStepAlloc, ::testing::Values("sgd", "adam"));

}  // namespace
}  // namespace mt
