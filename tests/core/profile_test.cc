// core/profile: the step accumulator, FLOP counts, the memory breakdown,
// the battery reader on a fake /sys, that a profiled LeNet-5 step's
// per-layer times add up to the step's measured time, and fused layers' rows.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "core/data/sampler.h"
#include "core/model/model_spec.h"
#include "core/optim/optimizer.h"
#include "core/profile/layer_flops.h"
#include "core/profile/memory_breakdown.h"
#include "core/profile/power_meter.h"
#include "core/profile/step_profile.h"
#include "core/profile/training_profiler.h"
#include "core/train/batch_buffer.h"
#include "core/util/process_stats.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/support/files.h"
#include "tests/support/synthetic_dataset.h"

namespace mt {
namespace {

namespace fs = std::filesystem;

LayerTimes TimesOf(std::vector<double> forward, std::vector<double> backward, double loss,
                   double transfer) {
  LayerTimes t;
  t.forward = std::move(forward);
  t.backward = std::move(backward);
  t.loss = loss;
  t.transfer = transfer;
  return t;
}

TEST(StepProfile, LeavesOutWarmUpAndSumsTheRest) {
  StepProfile p(2, /*warmup_steps=*/2);
  const LayerTimes slow = TimesOf({10, 20}, {30, 40}, 5, 6);
  const LayerTimes fast = TimesOf({1, 2}, {3, 4}, 0.5, 0.25);
  p.AddPass(slow, 64, 100, 200);
  p.AddOptimizerStep(50);
  p.AddPass(slow, 64, 100, 200);
  p.AddOptimizerStep(50);
  EXPECT_EQ(p.steps(), 0);
  for (int i = 0; i < 3; ++i) {
    p.AddPass(fast, 32, 0.5, 11);
    p.AddOptimizerStep(0.75);
  }
  EXPECT_EQ(p.passes_seen(), 5);
  EXPECT_EQ(p.steps(), 3);
  EXPECT_EQ(p.samples(), 96);
  EXPECT_DOUBLE_EQ(p.forward(0), 3);
  EXPECT_DOUBLE_EQ(p.forward(1), 6);
  EXPECT_DOUBLE_EQ(p.backward(0), 9);
  EXPECT_DOUBLE_EQ(p.backward(1), 12);
  EXPECT_DOUBLE_EQ(p.loss(), 1.5);
  EXPECT_DOUBLE_EQ(p.transfer(), 0.75);
  EXPECT_DOUBLE_EQ(p.data(), 1.5);
  EXPECT_DOUBLE_EQ(p.pass(), 33);
  EXPECT_DOUBLE_EQ(p.optimizer(), 2.25);
  EXPECT_DOUBLE_EQ(p.accounted(), 3 + 6 + 9 + 12 + 1.5 + 0.75);
  EXPECT_THROW(p.AddPass(TimesOf({1}, {1}, 0, 0), 1, 0, 0), std::invalid_argument);
}

TEST(LayerFlops, LeNetForwardAndBackward) {
  kernels::CpuBackend cpu;
  const proto::ModelSpec spec = LoadModelSpec("lenet5");
  const auto model = BuildModel(spec, cpu);
  const std::vector<int64_t> fwd = ForwardFlopsPerSample(spec, *model);
  ASSERT_EQ(fwd.size(), model->layers().size());
  // conv1: 6x28x28 outputs, 1x5x5 taps; conv2: 16x10x10, 6x5x5; fc1 400 -> 120.
  EXPECT_EQ(fwd[0], 2 * 6 * 28 * 28 * 25);
  EXPECT_EQ(fwd[3], 2 * 16 * 10 * 10 * 6 * 25);
  EXPECT_EQ(fwd[7], 2 * 400 * 120);
  EXPECT_EQ(fwd[1], 0);  // ReLU compares
  const std::vector<int64_t> bwd = BackwardFlopsPerSample(*model, fwd);
  EXPECT_EQ(bwd[0], fwd[0]);      // the first layer needs no input gradient
  EXPECT_EQ(bwd[3], 2 * fwd[3]);  // input and weight gradients
  EXPECT_EQ(bwd[7], 2 * fwd[7]);
  // Frozen below the head: nothing runs backward there but the head's weights.
  const auto frozen = BuildModel(spec, cpu, {}, {"conv1", "conv2", "fc1", "fc2"});
  const std::vector<int64_t> fb = BackwardFlopsPerSample(*frozen, fwd);
  EXPECT_EQ(fb[0], 0);
  EXPECT_EQ(fb[3], 0);
  EXPECT_EQ(fb[11], fwd[11]);
}

TEST(MemoryBreakdown, PartsAddUpToTheModelsEstimate) {
  kernels::CpuBackend cpu;
  for (const char* name : {"lenet5", "mobilenet-tiny"}) {
    const auto model = BuildModel(LoadModelSpec(name), cpu);
    for (int capacity : {1, 16, 64}) {
      const MemoryBreakdown m = PredictTrainingMemory(*model, capacity, model->ParamCount());
      EXPECT_EQ(m.weights, static_cast<int64_t>(model->ParamCount() * 4)) << name;
      EXPECT_EQ(m.optimizer, m.weights);
      EXPECT_GT(m.activations, 0);
      EXPECT_EQ(m.weights + m.gradients + m.running_stats + m.activations + m.workspaces,
                static_cast<int64_t>(model->MemoryBytes(capacity)))
          << name << " at " << capacity;
      EXPECT_EQ(m.batch, static_cast<int64_t>((model->input_shape().count() + 1) * 4 * capacity));
      EXPECT_EQ(m.Total(),
                static_cast<int64_t>(model->MemoryBytes(capacity)) + m.optimizer + m.batch);
    }
  }
}

TEST(ResidentMemory, ReadsThisProcess) {
  const ResidentMemory m = ReadResidentMemory();
  EXPECT_GT(m.current_bytes, 1 << 20);
  EXPECT_GE(m.peak_bytes, m.current_bytes);
}

class PowerMeterTest : public ::testing::Test {
 protected:
  void SetUp() override { root_ = test_support::FreshTempDir("power-meter"); }
  void TearDown() override { fs::remove_all(root_); }
  void Supply(const std::string& name, const std::map<std::string, std::string>& files) {
    const fs::path dir = root_ / "class" / "power_supply" / name;
    fs::create_directories(dir);
    for (const auto& [file, text] : files) std::ofstream(dir / file) << text << "\n";
  }
  fs::path root_;
};

TEST_F(PowerMeterTest, NoBatteryIsUnknown) {
  Supply("AC", {{"type", "Mains"}, {"online", "1"}});
  const PowerMeter meter(root_.string());
  EXPECT_FALSE(meter.available());
  EXPECT_TRUE(std::isnan(meter.Watts()));
  EXPECT_TRUE(std::isnan(PowerMeter((root_ / "nowhere").string()).Watts()));
}

TEST_F(PowerMeterTest, DischargingBatteriesAddUp) {
  // power_now in microwatts; current_now (signed by some drivers) times voltage_now.
  Supply("BAT0", {{"type", "Battery"}, {"status", "Discharging"}, {"power_now", "15500000"}});
  Supply("BAT1", {{"type", "Battery"},
                  {"status", "Discharging"},
                  {"current_now", "-1500000"},
                  {"voltage_now", "12000000"}});
  PowerMeter meter(root_.string());
  EXPECT_TRUE(meter.available());
  EXPECT_NEAR(meter.Watts(), 15.5 + 18.0, 1e-9);
  // On the charger the battery's current charges it: what the machine draws is unknown.
  std::ofstream(root_ / "class" / "power_supply" / "BAT0" / "status") << "Charging\n";
  EXPECT_TRUE(std::isnan(meter.Watts()));
}

TEST(EnergyMeter, IntegratesAndKnowsWhenItCannot) {
  EnergyMeter e;
  EXPECT_FALSE(e.known());
  e.Sample(0, 10);
  e.Sample(1, 20);  // 15 J
  e.Sample(3, 20);  // 40 J
  EXPECT_TRUE(e.known());
  EXPECT_DOUBLE_EQ(e.joules(), 55);
  e.Sample(4, NAN);
  EXPECT_FALSE(e.known());
  EXPECT_TRUE(std::isnan(e.joules()));
}

// The task's check: forward + backward of every layer + loss + transfers
// account for the measured time of the pass (median over 20 steps of
// LeNet-5 at batch 64 on one thread, all measured here).
TEST(TrainingProfiler, LayerTimesAddUpToTheStep) {
  kernels::CpuBackend cpu(1);
  const proto::ModelSpec spec = LoadModelSpec("lenet5");
  auto model = BuildModel(spec, cpu);
  const int batch = 64;
  model->Reserve(batch);
  model->InitParams(1);
  auto optimizer = MakeOptimizer(OptimizerConfig{}, cpu, model->ParamCount());
  test_support::SyntheticDataset data(512, model->input_shape(), 10, 3);
  BatchBuffer buffer(data.SampleShape(), batch);
  const auto order = EpochOrder(data.Size(), 1, 0);
  ProfileSetup setup;
  setup.warmup_steps = 2;
  setup.peak_budget_seconds = 0.05;
  setup.sys_root = "/nonexistent";
  TrainingProfiler profiler(*model, spec, batch, optimizer->slot_values(), setup);
  std::vector<double> ratios;
  for (int step = 0; step < 22; ++step) {
    buffer.Fill(data, order.data() + (step * batch) % 448, batch);
    model->SetBatch(buffer.images(), buffer.labels(), batch);
    const auto begin = std::chrono::steady_clock::now();
    model->ComputeGradients(static_cast<uint64_t>(step), profiler.times());
    const double pass =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    profiler.EndPass(batch, 0, pass);
    optimizer->Step(model->params(), model->grads());
    profiler.EndOptimizerStep(0);
    const LayerTimes& t = *profiler.times();
    double sum = t.loss + t.transfer;
    for (size_t i = 0; i < t.forward.size(); ++i) sum += t.forward[i] + t.backward[i];
    if (step >= setup.warmup_steps) ratios.push_back(sum / pass);
  }
  std::sort(ratios.begin(), ratios.end());
  const double median = ratios[ratios.size() / 2];
  EXPECT_GT(median, 0.9);
  EXPECT_LE(median, 1.0 + 1e-9);
  const StepProfile& s = profiler.steps();
  EXPECT_EQ(s.steps(), 20);
  EXPECT_NEAR(s.accounted() / s.pass(), 1.0, 0.1);

  const ReportJson j = profiler.ToJson();
  ASSERT_EQ(j["layers"].size(), model->layers().size());
  for (size_t i = 0; i < model->layers().size(); ++i)
    EXPECT_EQ(j["layers"][i]["name"], model->layers()[i]->name());
  const ReportJson& conv2 = j["layers"][3];
  EXPECT_GT(conv2["forward_ms"].get<double>(), 0);
  EXPECT_GT(conv2["backward_ms"].get<double>(), 0);
  EXPECT_GT(conv2["gflops_per_s"].get<double>(), 0);
  EXPECT_GT(conv2["peak_share"].get<double>(), 0);
  EXPECT_TRUE(j["energy_joules_per_step"].is_null());  // no battery at /nonexistent
  EXPECT_GT(j["memory"]["peak_rss"].get<int64_t>(), 0);
  EXPECT_TRUE(j["memory"]["predicted_total"].is_null());  // no baseline given
  EXPECT_GT(j["cpu_utilisation"].get<double>(), 0);
  EXPECT_THAT(profiler.Table(), ::testing::HasSubstr("conv2"));
}

// An activation fused into the batch norm before it (core/model/fusion.cc)
// is named as such in the report and the table, not shown as a 0 ms layer.
TEST(TrainingProfiler, AFusedActivationNamesTheLayerItIsFusedInto) {
  kernels::CpuBackend cpu(1);
  const proto::ModelSpec spec = LoadModelSpec("mobilenet-tiny");
  const auto model = BuildModel(spec, cpu);
  ProfileSetup quick;
  quick.peak_budget_seconds = 0.01;
  TrainingProfiler profiler(*model, spec, 2, 0, quick);
  const ReportJson j = profiler.ToJson();
  const ReportJson& relu = j["layers"][2];
  ASSERT_EQ(relu["name"], "stem_relu");
  EXPECT_EQ(relu["fused_into"], "stem_bn");
  EXPECT_TRUE(j["layers"][1]["fused_into"].is_null());  // the batch norm itself
  EXPECT_THAT(profiler.Table(), ::testing::HasSubstr("fused into stem_bn"));
}

}  // namespace
}  // namespace mt
