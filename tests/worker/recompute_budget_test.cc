// A worker's memory budget turns recomputation on when, and only when, it is
// what makes the hub's batch fit; --recompute turns it on always.
#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>

#include "core/model/model_spec.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/support/cifar_writer.h"
#include "tests/support/files.h"
#include "worker/compute_devices.h"
#include "worker/local_trainer.h"

namespace mt {
namespace {

namespace fs = std::filesystem;

// What a batch of `capacity` needs as the worker judges it (CheckBatchFits).
int64_t Needs(bool recompute, int capacity) {
  kernels::CpuBackend cpu(1);
  auto model = BuildModel(LoadModelSpec("mobilenet-tiny"), cpu);
  model->SetRecompute(recompute);
  return static_cast<int64_t>(BatchNeeds(*model, capacity, TrainerSpec{}.optimizer));
}

TEST(RecomputeBudget, TurnsOnOnlyWhenItMakesTheBatchFit) {
  const fs::path dir = test_support::FreshTempDir("recompute-budget");
  test_support::WriteCifarDataset(dir, 32, 8, 3);
  ComputeDevices devices(DeviceChoice::kCpu, 1);
  const int capacity = 16;
  const int64_t plain = Needs(false, capacity), replaying = Needs(true, capacity);
  ASSERT_LT(replaying, plain);
  auto trainer = [&](int64_t budget, bool asked) {
    TrainerSpec spec;
    spec.model = LoadModelSpec("mobilenet-tiny");
    spec.dataset = dir.string();
    spec.capacity = capacity;
    spec.memory_budget_bytes = budget;
    spec.recompute = asked;
    return std::make_unique<LocalTrainer>(devices, spec);
  };
  {
    auto t = trainer((plain + replaying) / 2, false);
    EXPECT_TRUE(t->recomputes());
    EXPECT_TRUE(t->recomputes_for_budget());
    EXPECT_TRUE(t->model().recompute());
    EXPECT_GT(t->model().ReplayedLayers(), 0u);
  }
  {
    auto t = trainer(plain + (1 << 20), false);
    EXPECT_FALSE(t->recomputes());
    EXPECT_FALSE(t->model().recompute());
  }
  {
    auto t = trainer(0, true);  // asked for, no budget
    EXPECT_TRUE(t->model().recompute());
    EXPECT_FALSE(t->recomputes_for_budget());
  }
  EXPECT_THROW(trainer(replaying - (1 << 20), false), std::runtime_error);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mt
