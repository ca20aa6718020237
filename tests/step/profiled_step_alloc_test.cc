// --profile times every step, and a profiled step must not touch the
// allocator either: the model's LayerTimes, the accumulator, the clocks,
// the CPU time and the battery reading all work in memory sized up front.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/data/sampler.h"
#include "core/model/model_spec.h"
#include "core/optim/optimizer.h"
#include "core/profile/training_profiler.h"
#include "core/train/batch_buffer.h"
#include "kernels/cpu/cpu_backend.h"
// The allocator's hooks are defined once per binary, by
// training_step_alloc_test.cc; this file only reads their count (which stays
// 0 where they are not installed, as under sanitizers).
#define MT_NO_MALLOC_HOOK 1
#include "tests/support/allocation_counter.h"
#include "tests/support/files.h"
#include "tests/support/synthetic_dataset.h"

namespace mt {
namespace {

TEST(ProfiledStepAlloc, AProfiledStepAllocatesNothing) {
  // A fake battery, so the reading per step is exercised too.
  const auto root = test_support::FreshTempDir("profiled-alloc");
  const auto bat = root / "class" / "power_supply" / "BAT0";
  std::filesystem::create_directories(bat);
  std::ofstream(bat / "type") << "Battery\n";
  std::ofstream(bat / "status") << "Discharging\n";
  std::ofstream(bat / "power_now") << "9000000\n";

  kernels::CpuBackend backend(2);
  const proto::ModelSpec spec = LoadModelSpec("lenet5");
  auto model = BuildModel(spec, backend);
  const int capacity = 64;
  model->Reserve(capacity);
  model->InitParams(1);
  auto opt = MakeOptimizer(OptimizerConfig{}, backend, model->ParamCount());
  ProfileSetup setup;
  setup.warmup_steps = 1;
  setup.peak_budget_seconds = 0.01;
  setup.sys_root = root.string();
  TrainingProfiler profiler(*model, spec, capacity, opt->slot_values(), setup);
  test_support::SyntheticDataset data(512, model->input_shape(), 10, 3);
  BatchBuffer batch(data.SampleShape(), capacity);
  const auto order = EpochOrder(data.Size(), 1, 0);
  int step = 0;
  auto run = [&](int n) {
    batch.Fill(data, order.data() + (step * capacity) % 448, n);
    model->SetBatch(batch.images(), batch.labels(), n);
    const double loss = model->ComputeGradients(step++, profiler.times());
    profiler.EndPass(n, 0.001, 0.002);
    opt->Step(model->params(), model->grads());
    profiler.EndOptimizerStep(0.0005);
    return loss;
  };
  const auto started = std::chrono::steady_clock::now();
  run(capacity);  // the first profiled pass sizes LayerTimes
  run(17);
  test_support::AllocationCounter counter;
  double loss = 0;
  for (int n : {64, 17, 1, 64}) loss += run(n);
  EXPECT_EQ(counter.count(), 0);
  EXPECT_TRUE(std::isfinite(loss));
  EXPECT_EQ(profiler.steps().steps(), 5);
  // 9 W over the profiler's window, which lies inside this test's own span
  // (a bound, not a timing target: emulators and sanitizers are slow).
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const double joules = profiler.ToJson()["energy_joules_per_step"].get<double>();
  EXPECT_GT(joules, 0.0);
  EXPECT_LE(joules, 9.0 * seconds / 5);
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace mt
