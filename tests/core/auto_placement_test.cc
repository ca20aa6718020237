// --device auto's placement: every layer timed on every candidate, in-place
// layers kept with their input, the chosen placement never one that measured
// slower than all-CPU, and the chosen model computing the CPU's gradients.
#include "core/model/auto_placement.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/model/model_spec.h"
#include "core/train/batch_buffer.h"
#include "tests/support/synthetic_dataset.h"
#include "tests/support/test_backends.h"

namespace mt {
namespace {

struct Batch {
  explicit Batch(int n) : data(n, Shape{1, 28, 28}, 10, 3), buffer(data.SampleShape(), n) {
    std::vector<uint32_t> idx(n);
    for (int i = 0; i < n; ++i) idx[i] = static_cast<uint32_t>(i);
    buffer.Fill(data, idx.data(), n);
  }
  testing::SyntheticDataset data;
  BatchBuffer buffer;
};

void ExpectWellFormed(const PlacementChoice& c, const proto::ModelSpec& spec, size_t candidates) {
  ASSERT_EQ(c.rows.size(), static_cast<size_t>(spec.layer_size()));
  ASSERT_EQ(c.placement.size(), c.rows.size());
  for (const PlacementRow& r : c.rows) {
    ASSERT_EQ(r.ms.size(), candidates) << r.layer;
    for (double ms : r.ms) EXPECT_GE(ms, 0.0) << r.layer;
  }
  ASSERT_GE(c.candidates.size(), candidates);
  EXPECT_EQ(c.placement, c.candidates[c.chosen].placement);
  for (const PlacementCandidate& k : c.candidates) EXPECT_GT(k.step_ms, 0.0) << k.name;
  // Never a placement that measured slower than all-CPU.
  EXPECT_LE(c.candidates[c.chosen].step_ms, c.candidates[0].step_ms);
  for (int i = 0; i < spec.layer_size(); ++i) {
    if (spec.layer(i).has_relu() || spec.layer(i).has_flatten()) {
      EXPECT_EQ(c.placement[i], c.placement[i - 1]) << "in-place layer " << i + 1 << " left its input";
    }
  }
}

TEST(AutoPlacement, CpuOnlyKeepsEveryLayerOnTheCpu) {
  auto cpu = testing::MakeTestBackend("cpu1");
  const proto::ModelSpec spec = LoadModelSpec("lenet5");
  Batch b(16);
  const PlacementChoice c =
      ChoosePlacement(spec, *cpu, {cpu.get()}, b.buffer.images(), b.buffer.labels(), 16, 1, 2);
  ExpectWellFormed(c, spec, 1);
  for (auto* p : c.placement) EXPECT_EQ(p, cpu.get());
  const std::string table = c.Table({cpu.get()});
  EXPECT_NE(table.find("conv1"), std::string::npos) << table;
  EXPECT_NE(table.find("<- chosen"), std::string::npos) << table;
}

TEST(AutoPlacement, CpuAndOpenClPicksAPlacementThatComputesTheSameGradients) {
  auto cpu = testing::MakeTestBackend("cpu1");
  auto cl = testing::MakeTestBackend("opencl");
  if (!cl) GTEST_SKIP() << testing::kNoOpenCl;
  const proto::ModelSpec spec = LoadModelSpec("lenet5");
  const int n = 16;
  Batch b(n);
  const PlacementChoice c =
      ChoosePlacement(spec, *cpu, {cpu.get(), cl.get()}, b.buffer.images(), b.buffer.labels(), n, 1, 2);
  ExpectWellFormed(c, spec, 2);
  const std::string table = c.Table({cpu.get(), cl.get()});
  EXPECT_NE(table.find("opencl ms"), std::string::npos) << table;
  EXPECT_NE(table.find("all opencl"), std::string::npos) << table;

  auto reference = BuildModel(spec, *cpu);
  auto chosen = BuildModel(spec, *cpu, c.placement);
  std::vector<float> g_ref(reference->ParamCount()), g_chosen(chosen->ParamCount());
  for (Model* m : {reference.get(), chosen.get()}) {
    m->Reserve(n);
    m->InitParams(5);
    m->SetBatch(b.buffer.images(), b.buffer.labels(), n);
  }
  const double l_ref = reference->ComputeGradients(3), l_chosen = chosen->ComputeGradients(3);
  reference->GetGrads(g_ref.data());
  chosen->GetGrads(g_chosen.data());
  EXPECT_NEAR(l_chosen, l_ref, 1e-4 * std::fabs(l_ref));
  for (size_t i = 0; i < g_ref.size(); ++i) ASSERT_NEAR(g_chosen[i], g_ref[i], 1e-4 + 1e-3 * std::fabs(g_ref[i])) << i;
}

}  // namespace
}  // namespace mt
