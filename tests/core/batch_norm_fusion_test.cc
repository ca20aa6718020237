// Batch norm fused with the ReLU or ReLU6 after it (core/model/fusion.cc,
// kernels/batch_norm_clip.h): numerical gradient checks of every fused path
// (ReLU and ReLU6; training, evaluation, frozen) with the clip's boundaries
// hit, which pairs a model fuses, and a model that fuses computing what the
// same model unfused does.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/data/dataset.h"
#include "core/layers/batch_norm2d.h"
#include "core/layers/relu6.h"
#include "core/model/model_spec.h"
#include "core/train/batch_buffer.h"
#include "kernels/batch_norm_clip.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/support/backend_test.h"
#include "tests/support/gradient_check.h"
#include "tests/support/synthetic_dataset.h"
#include "tests/support/test_backends.h"

namespace mt {
namespace {

using test_support::CheckLayerGradients;
using test_support::CheckOptions;
using test_support::RandomVector;

constexpr float kInf = std::numeric_limits<float>::infinity();

class BatchNormFusion : public test_support::BackendTest {
 protected:
  void SetUp() override {
    BackendTest::SetUp();
    if (IsSkipped()) return;
    if (!backend().SupportedOps().Contains(kernels::BatchNormClipOps()))
      GTEST_SKIP() << backend().Name() << " has no fused batch norm (it runs the pair unfused)";
  }

  // Checks a fused batch norm's gradients on [batch][3][4][5] inputs from
  // [lo_x, hi_x], and that several outputs sit on each finite
  // bound of the clip and several strictly inside.
  void Check(float hi, CheckOptions o, bool frozen, float lo_x, float hi_x) {
    const Shape sample{3, 4, 5};
    const int batch = 3;
    BatchNorm2D bn(0.0f, 0.0f);
    bn.FuseClip(0.0f, hi);
    bn.set_frozen(frozen);
    o.bind_running_stats = true;
    o.inspect_output = [hi](const std::vector<float>& y) {
      const auto at_lo = std::count(y.begin(), y.end(), 0.0f);
      const auto at_hi = std::count(y.begin(), y.end(), hi);
      const auto inside =
          std::count_if(y.begin(), y.end(), [hi](float v) { return v > 0 && v < hi; });
      const long several = 5;
      EXPECT_GE(at_lo, several) << "too few outputs clipped at 0";
      if (hi != kInf) {
        EXPECT_GE(at_hi, several) << "too few outputs clipped at " << hi;
      }
      EXPECT_GE(inside, several) << "too few outputs inside the clip";
    };
    CheckLayerGradients(bn, sample, batch, backend(),
                        RandomVector(sample.count() * batch, 31, lo_x, hi_x), o);
  }
};

// Batch statistics: scale and shift up to 4 put the outputs of normalised
// inputs (about -2..2) on both sides of 0 and of 6. That map is strongly
// curved (a smaller step keeps curvature from passing for a kink), and every
// output near a bound is a kink for all derivatives of its channel, so more
// points are skipped than for a smooth layer.
CheckOptions TrainingOptions() {
  CheckOptions o;
  o.param_range = 4.0f;
  o.eps = 4e-3f;
  o.max_skipped_fraction = 0.25;
  return o;
}

TEST_P(BatchNormFusion, TrainingWithReLU6) {
  Check(ReLU6::kCeiling, TrainingOptions(), false, 0.5f, 2.5f);
}

TEST_P(BatchNormFusion, TrainingWithReLU) { Check(kInf, TrainingOptions(), false, 0.5f, 2.5f); }

// Evaluation: the running statistics (mean 0, variance 1) make the layer
// x * scale + shift, so inputs up to 12 reach past 6.
CheckOptions EvaluationOptions() {
  CheckOptions o;
  o.training = false;
  o.param_range = 1.5f;
  return o;
}

TEST_P(BatchNormFusion, EvaluationWithReLU6) {
  Check(ReLU6::kCeiling, EvaluationOptions(), false, -12, 12);
}

TEST_P(BatchNormFusion, EvaluationWithReLU) { Check(kInf, EvaluationOptions(), false, -12, 12); }

// A frozen layer in training is the same affine map; its parameter
// gradients are left alone, so only the input's are checked.
TEST_P(BatchNormFusion, FrozenWithReLU6) {
  CheckOptions o = EvaluationOptions();
  o.training = true;
  o.check_params = false;
  Check(ReLU6::kCeiling, o, true, -12, 12);
}

INSTANTIATE_TEST_SUITE_P(Backends, BatchNormFusion, ::testing::Values("cpu1", "cpu3", "opencl"),
                         [](const auto& info) { return info.param; });

// ---- which pairs a model fuses

constexpr const char* kPairs = R"(
name: "pairs"
input { channels: 2 height: 4 width: 4 }
layer { name: "c1" conv { filters: 3 kernel: 3 padding: 1 } }
layer { name: "bn1" batchnorm {} }
layer { name: "r1" relu6 {} }
layer { name: "bn2" batchnorm {} }
layer { name: "r2" relu {} }
layer { name: "sum" add {} inputs: "bn2" inputs: "r2" }
layer { name: "bn3" batchnorm {} }
layer { name: "r3" relu {} }
layer { name: "flat" flatten {} }
layer { name: "fc" dense { units: 3 } }
)";

const Layer* Named(const Model& m, const std::string& name) {
  for (const auto& l : m.layers())
    if (l->name() == name) return l.get();
  return nullptr;
}

// bn2's output is read by r2 and by sum, so r2 runs out of place and stays
// a layer of its own; bn1 + r1 and bn3 + r3 fuse.
TEST(BatchNormFusionRules, OnlyAnActivationInPlaceOverItsOnlyReaderIsAbsorbed) {
  kernels::CpuBackend cpu(1);
  auto model = BuildModel(ParseModelSpec(kPairs, "pairs"), cpu);
  EXPECT_EQ(Named(*model, "r1")->absorbed_by(), Named(*model, "bn1"));
  EXPECT_EQ(Named(*model, "r2")->absorbed_by(), nullptr);
  EXPECT_EQ(Named(*model, "r3")->absorbed_by(), Named(*model, "bn3"));
  EXPECT_TRUE(static_cast<const BatchNorm2D*>(Named(*model, "bn1"))->clips());
  EXPECT_FALSE(static_cast<const BatchNorm2D*>(Named(*model, "bn2"))->clips());
  // A backend without the fused ops runs every pair unfused.
  test_support::LimitedBackend<kernels::CpuBackend> plain("cpu-unfused",
                                                          kernels::BatchNormClipOps(), 1);
  auto unfused = BuildModel(ParseModelSpec(kPairs, "pairs"), plain);
  for (const auto& l : unfused->layers()) EXPECT_EQ(l->absorbed_by(), nullptr) << l->name();
}

// ---- fused and unfused models agree

struct Pass {
  std::vector<float> grads, stats;
  std::vector<int32_t> predictions;
  double loss = 0, eval_loss = 0;
};

Pass RunMobileNetTiny(kernels::Backend& backend, size_t* absorbed) {
  auto model = BuildModel(LoadModelSpec("mobilenet-tiny"), backend);
  *absorbed = 0;
  for (const auto& l : model->layers()) *absorbed += l->absorbed_by() != nullptr;
  const int n = 8;
  model->InitParams(3);
  model->Reserve(n);
  test_support::SyntheticDataset data(n, model->input_shape(), model->num_classes(), 5);
  std::vector<uint32_t> idx(n);
  for (int i = 0; i < n; ++i) idx[i] = i;
  BatchBuffer batch(data.SampleShape(), n);
  batch.Fill(data, idx.data(), n);
  model->SetBatch(batch.images(), batch.labels(), n);
  Pass p;
  p.loss = model->ComputeGradients(1);
  p.grads.resize(model->ParamCount());
  model->GetGrads(p.grads.data());
  p.stats.resize(model->RunningStatCount());
  model->GetRunningStats(p.stats.data());
  p.predictions.resize(n);
  p.eval_loss = model->Evaluate(p.predictions.data());
  return p;
}

// The fused passes do the unfused pair's float operations in the same order
// (the same clip comparisons, the same mask, formed from the input instead
// of the output, the same masked sums), so every number is identical, not
// merely close: exact equality is the test.
TEST(BatchNormFusionModel, MobileNetTinyFusedComputesExactlyWhatUnfusedDoes) {
  for (int threads : {1, 3}) {
    kernels::CpuBackend cpu(threads);
    test_support::LimitedBackend<kernels::CpuBackend> plain("cpu-unfused",
                                                            kernels::BatchNormClipOps(), threads);
    size_t fused_pairs = 0, unfused_pairs = 0;
    const Pass fused = RunMobileNetTiny(cpu, &fused_pairs);
    const Pass unfused = RunMobileNetTiny(plain, &unfused_pairs);
    EXPECT_EQ(fused_pairs, 11u) << "every batch norm + ReLU6 pair of mobilenet-tiny";
    EXPECT_EQ(unfused_pairs, 0u);
    EXPECT_EQ(fused.loss, unfused.loss);
    EXPECT_EQ(fused.eval_loss, unfused.eval_loss);
    EXPECT_EQ(fused.predictions, unfused.predictions);
    EXPECT_EQ(fused.stats, unfused.stats);
    ASSERT_EQ(fused.grads.size(), unfused.grads.size());
    size_t differ = 0;
    for (size_t i = 0; i < fused.grads.size(); ++i) differ += fused.grads[i] != unfused.grads[i];
    EXPECT_EQ(differ, 0u) << "of " << fused.grads.size() << " gradients, " << threads
                          << " thread(s)";
    EXPECT_TRUE(
        std::any_of(fused.grads.begin(), fused.grads.end(), [](float g) { return g != 0; }));
  }
}

}  // namespace
}  // namespace mt
