// Models as graphs: layers that name their inputs, values read by several
// layers, skip connections, frozen layers, on every backend and across two.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/data/dataset.h"
#include "core/model/model_spec.h"
#include "core/optim/optimizer.h"
#include "core/train/batch_buffer.h"
#include "tests/support/gradient_check.h"
#include "tests/support/synthetic_dataset.h"
#include "tests/support/test_backends.h"

namespace mt {
namespace {

using test_support::SyntheticDataset;

// Two skip connections and two values read twice: c1 by r1 and c3, r1 by c2
// and sum. r1 may not run in place (c3 reads c1 unchanged).
constexpr const char* kResidual = R"(
name: "residual"
input { channels: 2 height: 6 width: 6 }
layer { name: "c1" conv { filters: 4 kernel: 3 padding: 1 } }
layer { name: "r1" relu {} }
layer { name: "c2" conv { filters: 4 kernel: 3 padding: 1 } }
layer { name: "sum" add {} inputs: "r1" inputs: "c2" }
layer { name: "r2" relu {} }
layer { name: "c3" conv { filters: 4 kernel: 1 } inputs: "c1" }
layer { name: "sum2" add {} inputs: "r2" inputs: "c3" }
layer { name: "flat" flatten {} }
layer { name: "fc" dense { units: 3 } }
)";

struct Placed {
  std::unique_ptr<kernels::Backend> cpu, cl;
  std::unique_ptr<Model> model;
};

// "mixed": convolutions on OpenCL, the adds and the rest on the CPU, so
// gradients of values read on both backends are summed across them.
Placed BuildPlaced(const std::string& text, const std::string& where,
                   const std::vector<std::string>& frozen = {}) {
  Placed p;
  p.cpu = test_support::MakeTestBackend("cpu2");
  const proto::ModelSpec spec = ParseModelSpec(text, "test");
  std::vector<kernels::Backend*> placement(spec.layer_size(), p.cpu.get());
  if (where != "cpu") {
    p.cl = test_support::MakeTestBackend("opencl");
    if (!p.cl) return p;
    for (int i = 0; i < spec.layer_size(); ++i)
      if (where == "opencl" || spec.layer(i).has_conv()) placement[i] = p.cl.get();
  }
  p.model = BuildModel(spec, *p.cpu, placement, frozen);
  return p;
}

void SetSyntheticBatch(Model& model, int n) {
  model.Reserve(n);
  SyntheticDataset data(n, model.input_shape(), model.num_classes(), 5);
  std::vector<uint32_t> idx(n);
  for (int i = 0; i < n; ++i) idx[i] = i;
  BatchBuffer batch(data.SampleShape(), n);
  batch.Fill(data, idx.data(), n);
  model.SetBatch(batch.images(), batch.labels(), n);
}

class GraphModel : public ::testing::TestWithParam<std::string> {};

// Each layer's parameter gradients against central differences of the loss.
void CheckModelGradients(Model& model) {
  const int n = 3;
  model.InitParams(7);
  SetSyntheticBatch(model, n);
  std::vector<float> params(model.ParamCount()), grads(model.ParamCount());
  model.GetParams(params.data());
  model.ComputeGradients(1);
  model.GetGrads(grads.data());

  test_support::CheckOptions o;
  o.eps = 1e-3f;
  o.rel_tol = 2e-2;
  o.kink_abs = 5e-3;
  o.kink_rel = 5e-2;
  o.max_mismatch_fraction = 0.05;
  for (size_t i = 0; i < model.layers().size(); ++i) {
    const size_t count = model.layers()[i]->ParamCount(), offset = model.ParamOffsets()[i];
    if (count == 0) continue;
    std::vector<float> slice(params.begin() + offset, params.begin() + offset + count);
    std::vector<float> analytic(grads.begin() + offset, grads.begin() + offset + count);
    test_support::CompareDerivatives(
        model.layers()[i]->name(), slice, analytic,
        [&](const std::vector<float>& v) {
          std::vector<float> all = params;
          std::copy(v.begin(), v.end(), all.begin() + offset);
          model.SetParams(all.data());
        },
        [&]() { return model.Evaluate(nullptr) / n; }, o, 60);
  }
}

TEST_P(GraphModel, SkipConnectionGradientsMatchCentralDifferences) {
  Placed placed = BuildPlaced(kResidual, GetParam());
  if (!placed.model) GTEST_SKIP() << test_support::kNoOpenCl;
  CheckModelGradients(*placed.model);
}

// A SqueezeNet Fire and a squeeze-and-excitation block, ReLUs in place where
// they may be: concat's and mul's gradients through values read twice and a
// gate. On OpenCL, mul, concat and the padded pools fall back to the CPU.
constexpr const char* kFireAndSe = R"(
name: "fire_se"
input { channels: 2 height: 6 width: 6 }
layer { name: "pool" maxpool { size: 3 stride: 1 padding: 1 } }
layer { name: "e1" conv { filters: 2 kernel: 1 } }
layer { name: "r1" relu {} }
layer { name: "e3" conv { filters: 3 kernel: 3 padding: 1 } inputs: "pool" }
layer { name: "r3" relu {} }
layer { name: "fire" concat {} inputs: "r1" inputs: "r3" }
layer { name: "squeeze" global_avgpool {} }
layer { name: "excite" dense { units: 5 } }
layer { name: "gate" relu {} }
layer { name: "scaled" mul {} inputs: "fire" inputs: "gate" }
layer { name: "smooth" avgpool { size: 3 stride: 2 padding: 1 count_include_pad: true } }
layer { name: "flat" flatten {} }
layer { name: "fc" dense { units: 3 } }
)";

TEST_P(GraphModel, FireAndSqueezeExcitationGradientsMatchCentralDifferences) {
  Placed placed = BuildPlaced(kFireAndSe, GetParam());
  if (!placed.model) GTEST_SKIP() << test_support::kNoOpenCl;
  CheckModelGradients(*placed.model);
}

// relu(x) + x through a 1x1 identity conv: if the ReLU wrote over the value
// the second branch reads, the logits would be relu(x) + relu(x).
TEST_P(GraphModel, AValueReadTwiceIsNotOverwrittenInPlace) {
  constexpr const char* kTwoReaders = R"(
input { channels: 1 height: 1 width: 2 }
layer { name: "c1" conv { filters: 1 kernel: 1 } }
layer { name: "r1" relu {} }
layer { name: "c3" conv { filters: 1 kernel: 1 } inputs: "c1" }
layer { name: "sum" add {} inputs: "r1" inputs: "c3" }
layer { name: "flat" flatten {} }
layer { name: "fc" dense { units: 2 } }
)";
  Placed placed = BuildPlaced(kTwoReaders, GetParam());
  if (!placed.model) GTEST_SKIP() << test_support::kNoOpenCl;
  Model& model = *placed.model;
  // c1: w 1 b 0; c3: w 1 b 0; fc: identity, no bias.
  const std::vector<float> params = {1, 0, 1, 0, 1, 0, 0, 1, 0, 0};
  ASSERT_EQ(model.ParamCount(), params.size());
  model.Reserve(1);
  model.SetParams(params.data());
  const float x[2] = {-1.0f, 2.0f};
  const int32_t label = 0;
  model.SetBatch(x, &label, 1);
  // logits relu(x) + x = (-1, 4); loss = logsumexp - logit[0].
  const double expected = std::log(std::exp(-1.0) + std::exp(4.0)) + 1.0;
  EXPECT_NEAR(model.Evaluate(nullptr), expected, 1e-5);
  EXPECT_NEAR(model.ComputeGradients(0), expected, 1e-5);
}

TEST_P(GraphModel, FrozenLayersGetNoGradientAndTheRestAreUnchanged) {
  Placed trained = BuildPlaced(kResidual, GetParam());
  Placed frozen = BuildPlaced(kResidual, GetParam(), {"c1", "c2"});
  if (!trained.model) GTEST_SKIP() << test_support::kNoOpenCl;
  std::vector<std::vector<float>> grads;
  for (Model* m : {trained.model.get(), frozen.model.get()}) {
    m->InitParams(3);
    SetSyntheticBatch(*m, 4);
    m->ComputeGradients(2);
    grads.emplace_back(m->ParamCount());
    m->GetGrads(grads.back().data());
  }
  const Model& m = *frozen.model;
  for (size_t i = 0; i < m.layers().size(); ++i) {
    const std::string name = m.layers()[i]->name();
    for (size_t j = 0; j < m.layers()[i]->ParamCount(); ++j) {
      const size_t at = m.ParamOffsets()[i] + j;
      if (name == "c1" || name == "c2")
        ASSERT_EQ(grads[1][at], 0.0f) << name << " [" << j << "]";
      else
        ASSERT_NEAR(grads[1][at], grads[0][at], 1e-5) << name << " [" << j << "]";
    }
  }
  // Nothing below c3 trains, and c1 feeds only frozen or untrained paths:
  // c1 needs no backward pass at all.
  EXPECT_FALSE(m.RunsBackward(0));
  EXPECT_TRUE(m.RunsBackward(m.layers().size() - 1));
}

INSTANTIATE_TEST_SUITE_P(Placements, GraphModel, ::testing::Values("cpu", "opencl", "mixed"),
                         [](const auto& info) { return info.param; });

TEST(GraphModelSpec, ShapesAndInputsAreReported) {
  kernels::CpuBackend cpu(1);
  auto model = BuildModel(ParseModelSpec(kResidual, "residual"), cpu);
  ASSERT_EQ(model->layers().size(), 9u);
  EXPECT_EQ(model->layer_inputs(0), std::vector<int>{-1});
  EXPECT_EQ(model->layer_inputs(3), (std::vector<int>{1, 2}));
  EXPECT_EQ(model->layer_inputs(5), std::vector<int>{0});
  EXPECT_EQ(model->layer_output_shape(6), (Shape{4, 6, 6}));
  EXPECT_EQ(model->output_shape(), Shape{3});
}

// The preset's count by hand: stem 432 + BN 32; per block expansion
// (in x hidden + BN), depthwise (9 x hidden + BN), projection (hidden x out
// + BN); head 32 x 128 + BN; dense 1290. Running statistics: 2 per BN channel.
TEST(GraphModelSpec, MobileNetTinyHasItsParametersAndLearns) {
  kernels::CpuBackend cpu(2);
  auto model = BuildModel(LoadModelSpec("mobilenet-tiny"), cpu);
  EXPECT_EQ(model->ParamCount(), 45386u);
  EXPECT_EQ(model->RunningStatCount(), 2880u);
  EXPECT_EQ(model->output_shape(), Shape{10});
  const int n = 16;
  model->InitParams(1);
  OptimizerConfig oc;
  oc.lr = 0.05f;
  auto opt = MakeOptimizer(oc, cpu, model->ParamCount());
  SetSyntheticBatch(*model, n);
  const double first = model->ComputeGradients(0) / n;
  opt->Step(model->params(), model->grads());
  double last = first;
  for (int s = 1; s < 30; ++s) {
    last = model->ComputeGradients(s) / n;
    opt->Step(model->params(), model->grads());
  }
  EXPECT_LT(last, 0.5 * first) << "one batch, 30 steps: the loss should fall";
  // Training moved the running statistics away from their start (0, 1).
  std::vector<float> stats(model->RunningStatCount());
  model->GetRunningStats(stats.data());
  EXPECT_NE(stats[0], 0.0f);
}

TEST(GraphModelSpec, FreezingAnUnknownLayerNamesTheLayers) {
  kernels::CpuBackend cpu(1);
  try {
    BuildModel(ParseModelSpec(kResidual, "residual"), cpu, {}, {"conv9"});
    FAIL() << "no error";
  } catch (const ModelSpecError& e) {
    EXPECT_NE(std::string(e.what()).find("conv9"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("c1, r1"), std::string::npos) << e.what();
  }
}

TEST(GraphModelSpec, BadGraphsAreRefusedNamingTheLayer) {
  kernels::CpuBackend cpu(1);
  const std::string head = "input { channels: 1 height: 4 width: 4 }\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"layer { name: \"a\" relu {} inputs: \"b\" }\n"
       "layer { name: \"b\" flatten {} }\nlayer { dense { units: 2 } }",
       "input 'b' is not the name of an earlier layer"},
      {"layer { name: \"a\" flatten {} }\nlayer { name: \"a\" dense { units: 2 } }",
       "already named 'a'"},
      {"layer { name: \"f\" flatten {} }\nlayer { name: \"d1\" dense { units: 2 } }\n"
       "layer { name: \"d2\" dense { units: 2 } inputs: \"f\" }",
       "d1): its output is not read"},
      {"layer { name: \"f\" flatten {} }\nlayer { name: \"d\" dense { units: 3 } }\n"
       "layer { name: \"s\" add {} inputs: \"f\" inputs: \"d\" }",
       "added inputs must have one shape"},
      {"layer { name: \"f\" flatten {} }\nlayer { name: \"s\" add {} }\n"
       "layer { dense { units: 2 } }",
       "does not take 1 inputs"},
      {"layer { name: \"input\" flatten {} }\nlayer { dense { units: 2 } }",
       "names the model's input"},
  };
  for (const auto& [layers, expected] : cases) {
    try {
      BuildModel(ParseModelSpec(head + layers, "bad"), cpu);
      ADD_FAILURE() << "no error for:\n" << layers;
    } catch (const ModelSpecError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos)
          << "expected '" << expected << "' in: " << e.what();
    }
  }
}

}  // namespace
}  // namespace mt
