// Activations kept in 16 bits for the backward pass (--activation-precision,
// core/model/activation_plan.h): gradients through every packed path against
// central differences and against the float plan, the forward pass and the
// loss untouched, deterministic, half the memory per sample.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/model/model_spec.h"
#include "core/optim/optimizer.h"
#include "core/profile/memory_breakdown.h"
#include "core/train/batch_buffer.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/support/model_gradient_check.h"
#include "tests/support/synthetic_dataset.h"

namespace mt {
namespace {

// Every kind of value a backward step reads: a conv's input (the model's
// input stays in floats), batch norm's input with a fused ReLU6, ReLU's
// output read by its own backward, a value read twice (r1), a 1x1 conv's
// input, max pool (its argmax, nothing packed), a dense layer's input.
constexpr const char* kPaths = R"(
name: "paths"
input { channels: 2 height: 8 width: 8 }
layer { name: "c1" conv { filters: 4 kernel: 3 padding: 1 } }
layer { name: "r1" relu {} }
layer { name: "c2" conv { filters: 4 kernel: 3 padding: 1 } }
layer { name: "sum" add {} inputs: "r1" inputs: "c2" }
layer { name: "e" conv { filters: 8 kernel: 1 no_bias: true } }
layer { name: "bn" batchnorm {} }
layer { name: "r2" relu6 {} }
layer { name: "dw" conv { filters: 8 kernel: 3 padding: 1 groups: 8 } }
layer { name: "pool" maxpool { size: 2 } }
layer { name: "flat" flatten {} }
layer { name: "fc" dense { units: 3 } }
)";

proto::ModelSpec Spec(const std::string& name) {
  return name == "paths" ? ParseModelSpec(kPaths, "test") : LoadModelSpec(name);
}

struct Gradients {
  double loss = 0;
  std::vector<float> grads, logits;
};

Gradients Compute(const std::string& name, ActivationPrecision precision, bool recompute) {
  kernels::CpuBackend cpu(1);
  auto model = BuildModel(Spec(name), cpu);
  model->SetActivationPrecision(precision);
  model->SetRecompute(recompute);
  EXPECT_EQ(model->PackedValues() > 0, precision != ActivationPrecision::kFp32)
      << "a case that packs nothing tests nothing";
  const int n = 5;
  model->Reserve(n);
  model->InitParams(3);
  test_support::SyntheticDataset data(n, model->input_shape(), model->num_classes(), 7);
  std::vector<uint32_t> idx{0, 1, 2, 3, 4};
  BatchBuffer batch(data.SampleShape(), n);
  batch.Fill(data, idx.data(), n);
  model->SetBatch(batch.images(), batch.labels(), n);
  Gradients g;
  g.loss = model->ComputeGradients(1);
  g.grads.resize(model->ParamCount());
  model->GetGrads(g.grads.data());
  g.logits.resize(static_cast<size_t>(n) * model->num_classes());
  model->GetLogits(g.logits.data());
  return g;
}

double RelativeDistance(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    norm += double(b[i]) * b[i];
  }
  return std::sqrt(diff / norm);
}

struct Case {
  const char* model;
  ActivationPrecision precision;
  bool recompute;
};

class HalfActivations : public ::testing::TestWithParam<Case> {};

// The forward pass and the loss are the float plan's bit for bit; the
// gradients differ (the saved values were rounded), but little: each value
// the backward pass reads is within a unit of 2^-8 (bf16's 8-bit
// significand) or 2^-11 (fp16's 11 bits) of the float one, relatively, and a
// gradient sums products of such values with independent rounding errors,
// so the whole gradient stays within a couple of units. (Batch norm's
// inputs are kept in floats: rounded, its mean subtraction amplified their
// error by mean / spread, and mobilenet-tiny's distance was 1.9e-2 in fp16.)
TEST_P(HalfActivations, ForwardExactGradientsClose) {
  const Case c = GetParam();
  const Gradients floats = Compute(c.model, ActivationPrecision::kFp32, c.recompute);
  const Gradients halves = Compute(c.model, c.precision, c.recompute);
  EXPECT_EQ(floats.loss, halves.loss);
  ASSERT_EQ(floats.logits.size(), halves.logits.size());
  EXPECT_EQ(std::memcmp(floats.logits.data(), halves.logits.data(), floats.logits.size() * 4), 0);
  const double distance = RelativeDistance(halves.grads, floats.grads);
  RecordProperty("relative_distance", std::to_string(distance));
  const double unit = c.precision == ActivationPrecision::kBf16 ? 0x1p-8 : 0x1p-11;
  EXPECT_LT(distance, 2 * unit);  // measured: 0.15-0.42 units
  EXPECT_GT(distance, 0.0) << "nothing was rounded: the 16-bit path did not run";
  // Deterministic: the same bits again (across thread counts and vector
  // widths the packing itself is checked in tests/kernels/half_storage_test.cc).
  const Gradients again = Compute(c.model, c.precision, c.recompute);
  EXPECT_EQ(std::memcmp(again.grads.data(), halves.grads.data(), halves.grads.size() * 4), 0);
}

INSTANTIATE_TEST_SUITE_P(
    Paths, HalfActivations,
    ::testing::Values(Case{"paths", ActivationPrecision::kBf16, false},
                      Case{"paths", ActivationPrecision::kFp16, false},
                      Case{"mentee", ActivationPrecision::kFp16, true},
                      Case{"mobilenet-tiny", ActivationPrecision::kBf16, false},
                      Case{"mobilenet-tiny", ActivationPrecision::kFp16, false},
                      Case{"mentee", ActivationPrecision::kBf16, false}),
    [](const auto& info) {
      std::string s = info.param.model;
      for (char& ch : s)
        if (ch == '-') ch = '_';
      return s + "_" + ActivationPrecisionName(info.param.precision) +
             (info.param.recompute ? "_recompute" : "");
    });

// Central differences of the training loss against the gradients of the
// packed plan, through every path of kPaths, in both formats. The objective
// (the forward pass) is exact; the analytic side read rounded values: bf16's
// 2^-8 relative error in each read value adds ~1% to a derivative, on top of
// the 2% the float check allows (recompute_test.cc).
TEST(HalfActivationGradients, MatchCentralDifferences) {
  for (const ActivationPrecision precision :
       {ActivationPrecision::kBf16, ActivationPrecision::kFp16}) {
    SCOPED_TRACE(ActivationPrecisionName(precision));
    kernels::CpuBackend cpu(1);
    auto model = BuildModel(Spec("paths"), cpu);
    model->SetActivationPrecision(precision);
    ASSERT_GE(model->PackedValues(), 5u);
    test_support::CheckOptions o;
    o.eps = 1e-3f;
    o.rel_tol = 3e-2;
    o.abs_tol = 2e-3;
    o.kink_abs = 5e-3;
    o.kink_rel = 5e-2;
    o.max_mismatch_fraction = 0.05;
    test_support::CheckModelGradients(*model, 4, 5, 9, o);
  }
}

// What is kept: every value a backward step reads, but the input and the
// logits, in 16 bits; with recomputation, only what is not replayed.
TEST(HalfActivationPlan, MobileNetKeepsHalfAsMuchPerSample) {
  kernels::CpuBackend cpu(1);
  auto per_sample = [&](ActivationPrecision p, bool recompute) {
    auto model = BuildModel(LoadModelSpec("mobilenet-tiny"), cpu);
    model->SetActivationPrecision(p);
    model->SetRecompute(recompute);
    return static_cast<double>(PredictBytesPerSample(*model));
  };
  const double fp32 = per_sample(ActivationPrecision::kFp32, false);
  const double bf16 = per_sample(ActivationPrecision::kBf16, false);
  EXPECT_EQ(bf16, per_sample(ActivationPrecision::kFp16, false));
  // 2,150 against 2,784 KiB: batch norm's inputs and the gradients stay in floats.
  EXPECT_LT(bf16, 0.8 * fp32);
  // Recomputing, what is kept is batch norm's inputs (in floats) and what
  // a replay starts from: 16 bits find nothing left to halve.
  EXPECT_EQ(per_sample(ActivationPrecision::kBf16, true),
            per_sample(ActivationPrecision::kFp32, true));
  auto model = BuildModel(LoadModelSpec("mobilenet-tiny"), cpu);
  EXPECT_EQ(model->PackedValues(), 0u);
  model->SetActivationPrecision(ActivationPrecision::kBf16);
  EXPECT_GT(model->PackedValues(), 10u);
  model->Reserve(2);
  EXPECT_THROW(model->SetActivationPrecision(ActivationPrecision::kFp32), std::logic_error);
}

// A chain whose backward steps read their inputs: every such value but the
// model's input is packed once its last forward reader has run, at half its
// floats, and widened just before the backward step that reads it.
TEST(HalfActivationPlan, PackedAfterTheLastForwardReaderWidenedBeforeTheBackwardStep) {
  ActivationGraph g;
  g.floats = {10, 20, 20, 21, 5};
  g.arena = {0, 0, 0, 0, 0};
  for (int i = 0; i < 4; ++i) {
    ActivationGraph::Step step;
    step.inputs = {i};
    step.runs_backward = true;
    step.backward_needs_output = false;
    g.steps.push_back(step);
  }
  const ActivationPlan floats = PlanActivations(g);
  g.half = true;
  const ActivationPlan halves = PlanActivations(g);
  EXPECT_EQ(floats.arena_floats[0], 10u + 20u + 20u + 21u + 5u);  // all kept at once
  EXPECT_LT(halves.arena_floats[0], floats.arena_floats[0]);
  for (int v : {0, 4}) EXPECT_FALSE(halves.packed[v]) << v;  // the input, the logits
  for (int v : {1, 2, 3}) {
    EXPECT_TRUE(halves.packed[v]) << v;
    ASSERT_EQ(halves.packs[v], std::vector<int>{v}) << "packed after layer " << v << " read it";
    ASSERT_EQ(halves.replays[v].size(), 1u);
    EXPECT_EQ(halves.replays[v][0].kind, ReplayStep::Kind::kWiden);
    EXPECT_EQ(halves.replays[v][0].index, v);
  }
  // The 16-bit copy of value 3 (21 floats) holds 11 floats per sample, and
  // no other copy alive with it overlaps it.
  const size_t at = halves.packed_at[3];
  for (int v : {1, 2})
    EXPECT_TRUE(halves.packed_at[v] + 10 <= at || at + 11 <= halves.packed_at[v]) << v;
  EXPECT_FALSE(floats.packed[1]);
}

// LeNet-5's arena peaks in its forward pass: packed copies beside the
// floats would only add, so the model keeps floats.
TEST(HalfActivationPlan, WherePackingSavesNothingFloatsAreKept) {
  kernels::CpuBackend cpu(1);
  auto model = BuildModel(LoadModelSpec("lenet5"), cpu);
  const size_t floats = model->MemoryBytesPerSample();
  model->SetActivationPrecision(ActivationPrecision::kBf16);
  EXPECT_EQ(model->PackedValues(), 0u);
  EXPECT_EQ(model->MemoryBytesPerSample(), floats);
}

TEST(ActivationPrecisionWords, RoundTrip) {
  for (const auto& [word, p] : ActivationPrecisionWords()) {
    EXPECT_EQ(ActivationPrecisionName(p), word);
    EXPECT_EQ(ParseActivationPrecision(word), p);
  }
  EXPECT_FALSE(ParseActivationPrecision("fp8").has_value());
}

}  // namespace
}  // namespace mt
