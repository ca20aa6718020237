// The memory prediction the batch caps rely on (Model::MemoryBytes,
// PredictTrainingMemory, worker/local_trainer.h's CheckBatchFits, the hub's
// line) against what the CPU backend's allocator actually holds, to the
// byte, for several models, batches and plans; and the one conv workspace
// the model shares between its layers.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "core/model/model_spec.h"
#include "core/optim/optimizer.h"
#include "core/profile/memory_breakdown.h"
#include "kernels/cpu/cpu_backend.h"

namespace mt {
namespace {

struct Case {
  const char* model;
  bool recompute;
  int threads;
};

class MemoryExact : public ::testing::TestWithParam<Case> {};

TEST_P(MemoryExact, PredictionEqualsWhatTheAllocatorHolds) {
  const Case c = GetParam();
  for (const int batch : {1, 5, 64}) {
    SCOPED_TRACE(std::string(c.model) + " batch " + std::to_string(batch));
    kernels::CpuBackend cpu(c.threads);
    auto model = BuildModel(LoadModelSpec(c.model), cpu);
    model->SetRecompute(c.recompute);
    model->Reserve(batch);
    EXPECT_EQ(cpu.AllocatedBytes(), model->MemoryBytes(batch));
    OptimizerConfig sgd;
    sgd.kind = OptimizerKind::kSgd;
    sgd.momentum = 0.9f;
    auto optimizer = MakeOptimizer(sgd, cpu, model->ParamCount());
    const MemoryBreakdown m = PredictTrainingMemory(*model, batch, optimizer->slot_values());
    EXPECT_EQ(static_cast<int64_t>(cpu.AllocatedBytes()), m.Total() - m.batch);
    // A training step allocates nothing more from the backend.
    const Shape in = model->input_shape();
    std::vector<float> images(in.count() * batch, 0.25f);
    std::vector<int32_t> labels(batch, 1);
    model->SetBatch(images.data(), labels.data(), batch);
    model->ComputeGradients(1);
    optimizer->Step(model->params(), model->grads());
    EXPECT_EQ(static_cast<int64_t>(cpu.AllocatedBytes()), m.Total() - m.batch);
    // The line the hub divides budgets by is never below; one more sample
    // costs the per-sample figure exactly, and whatever the workspace grows.
    const MemoryLine line = PredictMemoryLine(*model, optimizer->slot_values());
    EXPECT_GE(line.fixed + line.per_sample * batch, m.Total());
    EXPECT_EQ(
        PredictTrainingMemory(*model, batch + 1, optimizer->slot_values()).Total() -
            PredictTrainingMemory(*model, batch, optimizer->slot_values()).Total(),
        PredictBytesPerSample(*model) +
            static_cast<int64_t>(model->WorkspaceBytes(batch + 1) - model->WorkspaceBytes(batch)));
  }
}

INSTANTIATE_TEST_SUITE_P(Models, MemoryExact,
                         ::testing::Values(Case{"lenet5", false, 1}, Case{"mentee", false, 2},
                                           Case{"mobilenet-tiny", false, 1},
                                           Case{"mobilenet-tiny", true, 2}),
                         [](const auto& info) {
                           std::string name = info.param.model;
                           for (char& ch : name)
                             if (ch == '-') ch = '_';
                           return name + (info.param.recompute ? "_recompute" : "") + "_" +
                                  std::to_string(info.param.threads) + "t";
                         });

// The hub's line is never below the prediction, and close to it: within
// the largest workspace, for batches large and small.
TEST(MemoryLine, NeverBelowThePrediction) {
  for (const char* name : {"mobilenet-tiny", "mentee", "lenet5"}) {
    kernels::CpuBackend cpu(2);
    auto model = BuildModel(LoadModelSpec(name), cpu);
    const MemoryLine line = PredictMemoryLine(*model, model->ParamCount());
    for (const int batch : {1, 2, 7, 64, 100, 333, 4096, 20000}) {
      SCOPED_TRACE(std::string(name) + " batch " + std::to_string(batch));
      const int64_t predicted = PredictTrainingMemory(*model, batch, model->ParamCount()).Total();
      EXPECT_GE(line.fixed + line.per_sample * batch, predicted);
      EXPECT_LE(line.fixed + line.per_sample * batch - predicted,
                static_cast<int64_t>(model->WorkspaceBytes(1024)));
    }
  }
}

// One workspace for the whole model, as large as the largest layer's need,
// not one per conv layer.
TEST(ConvWorkspace, OneForTheModelSizedByTheLargestNeed) {
  kernels::CpuBackend cpu(2);
  auto model = BuildModel(LoadModelSpec("mobilenet-tiny"), cpu);
  size_t largest = 0, summed = 0;
  for (const auto& layer : model->layers()) {
    largest = std::max(largest, layer->WorkspaceFloats(64));
    summed += layer->WorkspaceFloats(64);
  }
  EXPECT_EQ(model->WorkspaceBytes(64), largest * sizeof(float));
  EXPECT_LT(largest * 4, summed);  // mobilenet-tiny: many convs, each needing some
}

}  // namespace
}  // namespace mt
