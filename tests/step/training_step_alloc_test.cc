// The whole steady-state step as the daemons run it (fill a batch, copy it
// in, forward, loss, backward, optimizer update) must not touch the
// allocator, for full and short batches, with SGD and Adam; nor must the
// hub's aggregation of each segment.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/data/sampler.h"
#include "core/model/model_spec.h"
#include "core/optim/optimizer.h"
#include "core/train/batch_buffer.h"
#include "hub/aggregation/robust_aggregate.h"
#include "hub/round/segment_reducer.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/support/allocation_counter.h"
#include "tests/support/synthetic_dataset.h"

namespace mt {
namespace {

class TrainingStepAlloc : public ::testing::TestWithParam<OptimizerKind> {};

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
    EXPECT_EQ(counter.count(), 0) << OptimizerKindName(GetParam()) << ", " << threads
                                  << " thread(s)";
#endif
    EXPECT_TRUE(std::isfinite(loss));
  }
}

void ExpectMobileNetStepAllocatesNothing(bool recompute, ActivationPrecision precision) {
  kernels::CpuBackend backend(2);
  auto model = BuildModel(LoadModelSpec("mobilenet-tiny"), backend);
  model->SetRecompute(recompute);
  model->SetActivationPrecision(precision);
  ASSERT_GT(model->ReplayedLayers() + model->PackedValues(), 0u);
  const int capacity = 8;
  model->Reserve(capacity);
  model->InitParams(1);
  auto opt = MakeOptimizer(OptimizerConfig{}, backend, model->ParamCount());
  test_support::SyntheticDataset data(64, model->input_shape(), 10, 3);
  BatchBuffer batch(data.SampleShape(), capacity);
  const auto order = EpochOrder(data.Size(), 1, 0);
  int step = 0;
  auto run = [&](int n) {
    batch.Fill(data, order.data() + (step * capacity) % 48, n);
    model->SetBatch(batch.images(), batch.labels(), n);
    const double loss = model->ComputeGradients(step++);
    opt->Step(model->params(), model->grads());
    return loss;
  };
  run(capacity);  // first use: lazily initialised statics may allocate once
  run(3);
  test_support::AllocationCounter counter;
  double loss = 0;
  for (int n : {8, 3, 8}) loss += run(n);
#ifndef MT_NO_MALLOC_HOOK
  EXPECT_EQ(counter.count(), 0);
#endif
  EXPECT_TRUE(std::isfinite(loss));
}

// Recomputation replays into places planned once: no allocation either.
TEST(TrainingStepAlloc, RecomputingMobileNetStepAllocatesNothing) {
  ExpectMobileNetStepAllocatesNothing(true, ActivationPrecision::kFp32);
}

// Packed values and their widened copies have planned places too.
TEST(TrainingStepAlloc, PackingMobileNetStepAllocatesNothing) {
  ExpectMobileNetStepAllocatesNothing(false, ActivationPrecision::kBf16);
  ExpectMobileNetStepAllocatesNothing(true, ActivationPrecision::kFp16);
}

INSTANTIATE_TEST_SUITE_P(Optimizers, TrainingStepAlloc,
                         ::testing::Values(OptimizerKind::kSgd, OptimizerKind::kAdam));

// The hub's aggregation (hub/aggregation/robust_aggregate.h) runs on every segment of
// every step: once its scratch is sized it allocates nothing either.
TEST(RobustAggregateAlloc, ASteadyStepAllocatesNothing) {
  for (size_t n : {2, 3, 5, 20}) {
    std::mt19937 rng(static_cast<uint32_t>(n));
    std::normal_distribution<float> normal(0, 1);
    std::vector<std::vector<float>> values(n, std::vector<float>(500));
    std::vector<const float*> inputs;
    for (auto& v : values) {
      for (float& x : v) x = normal(rng);
      inputs.push_back(v.data());
    }
    const std::vector<float> weights(n, 1.0f / static_cast<float>(n));
    std::vector<float> out(500);
    for (Aggregation mode : {Aggregation::kAuto, Aggregation::kMedian, Aggregation::kTrimmedMean,
                             Aggregation::kMean}) {
      RobustAggregator agg({mode});
      agg.Aggregate(inputs.data(), weights.data(), n, 500, out.data());  // sizes its scratch
      test_support::AllocationCounter counter;
      agg.Aggregate(inputs.data(), weights.data(), n, 500, out.data());
#ifndef MT_NO_MALLOC_HOOK
      EXPECT_EQ(counter.count(), 0) << AggregationName(mode) << " over " << n;
#endif
    }
  }
}

// The round's reduction (hub/round/segment_reducer.h) around it: gathering
// the contributions, combining and checking every segment of a step, for
// the same participants step after step.
TEST(SegmentReducerAlloc, ASteadyStepAllocatesNothing) {
  const std::vector<SegmentRange> segments = {{300, 500}, {100, 300}, {0, 100}};
  for (size_t n : {2, 3, 8}) {
    std::mt19937 rng(static_cast<uint32_t>(n));
    std::normal_distribution<float> normal(0, 1);
    std::vector<std::vector<float>> values(n, std::vector<float>(500));
    for (auto& v : values)
      for (float& x : v) x = normal(rng);
    std::vector<float> out(500);
    SegmentReducer reducer(segments, AggregatorOptions{Aggregation::kAuto});
    int64_t step = 0;
    auto run_step = [&] {
      reducer.Begin(step++, false, n);
      while (!reducer.done()) {
        reducer.ClearInputs();
        for (size_t i = 0; i < n; ++i)
          reducer.AddInput({static_cast<int>(i), values[i].data(), 16, segments.size()});
        ASSERT_TRUE(reducer.Ready());
        ASSERT_TRUE(reducer.Combine(out.data()).ok());
        ASSERT_TRUE(reducer.CheckAlignment().ok());
        reducer.Commit();
      }
    };
    run_step();  // sizes the scratch and the alignment watch
    test_support::AllocationCounter counter;
    for (int i = 0; i < 3; ++i) run_step();
#ifndef MT_NO_MALLOC_HOOK
    EXPECT_EQ(counter.count(), 0) << n << " contributions";
#endif
  }
}

}  // namespace
}  // namespace mt
