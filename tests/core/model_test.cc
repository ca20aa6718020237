// Whole-model checks: spec parsing and its errors; LeNet-5's gradient against
// central differences and a 50-step training run against the CPU run, with
// the layers on the CPU, on OpenCL, and split between them; determinism; a
// short training run whose loss falls.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "core/data/sampler.h"
#include "core/model/model_spec.h"
#include "core/optim/optimizer.h"
#include "core/train/batch_buffer.h"
#include "core/util/process_stats.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/support/files.h"
#include "tests/support/gradient_check.h"
#include "tests/support/synthetic_dataset.h"
#include "tests/support/test_backends.h"

namespace mt {
namespace {

using test_support::SyntheticDataset;

TEST(ModelSpec, PresetsBuildWithKnownParameterCounts) {
  kernels::CpuBackend backend;
  auto lenet = BuildModel(LoadModelSpec("lenet5"), backend);
  // conv1 6*25+6, conv2 16*150+16, fc 400*120+120, 120*84+84, 84*10+10
  EXPECT_EQ(lenet->ParamCount(), 156u + 2416u + 48120u + 10164u + 850u);
  EXPECT_EQ(lenet->num_classes(), 10);
  auto mentee = BuildModel(LoadModelSpec("mentee"), backend);
  EXPECT_EQ(mentee->input_shape(), (Shape{3, 32, 32}));
  EXPECT_EQ(mentee->num_classes(), 10);
}

TEST(ModelSpec, AbsurdSizesAreRefusedBeforeAllocating) {
  // From a file, a hub or a graph, any of them hostile: each is a clear
  // ModelSpecError naming the layer, at once, with no memory spent (these
  // had overflowed int sizes or ended in std::bad_alloc after gigabytes).
  kernels::CpuBackend backend;
  const int64_t rss_before = PeakRssBytes();
  const char* in28 = "input { channels: 1 height: 28 width: 28 }\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {std::string(in28) +
           "layer { flatten {} } layer { name: \"huge\" dense { units: 2000000000 } }",
       "huge"},
      {std::string(in28) +
           "layer { name: \"wide\" conv { filters: 100000 kernel: 3 padding: 1000 } }"
           " layer { flatten {} } layer { dense { units: 10 } }",
       "wide"},
      {std::string(in28) + "layer { name: \"k\" conv { filters: 2 kernel: 100000 } }"
                           " layer { flatten {} } layer { dense { units: 10 } }",
       "kernel, stride and padding"},
      {"input { channels: 65536 height: 65536 width: 65536 }\n"
       "layer { flatten {} } layer { dense { units: 10 } }",
       "2^28"},
      {std::string(in28) + "layer { flatten {} } layer { dense { units: 100000 } }"
                           " layer { dense { units: 1000 } } layer { dense { units: 10 } }",
       "2^26"},
      {std::string(in28) + "layer { name: \"p\" maxpool { size: 2 stride: 100000 } }"
                           " layer { flatten {} } layer { dense { units: 10 } }",
       "at most"},
  };
  for (const auto& [text, says] : cases) {
    try {
      BuildModel(ParseModelSpec(text, "absurd"), backend);
      ADD_FAILURE() << "built: " << text;
    } catch (const ModelSpecError& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr(says)) << text;
    }
  }
  EXPECT_LT(PeakRssBytes() - rss_before, int64_t{64} << 20);
}

TEST(ModelSpec, TextRoundTrip) {
  const proto::ModelSpec spec = LoadModelSpec("lenet5");
  const proto::ModelSpec again = ParseModelSpec(ModelSpecToText(spec), "round trip");
  EXPECT_EQ(ModelSpecToText(again), ModelSpecToText(spec));
}

TEST(ModelSpec, ErrorsNameTheProblem) {
  kernels::CpuBackend backend;
  try {
    LoadModelSpec("lenet6");
    FAIL() << "unknown preset accepted";
  } catch (const ModelSpecError& e) {
    // Names the unknown one and what there is.
    EXPECT_THAT(e.what(), ::testing::HasSubstr("lenet6"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("lenet5"));
  }
  try {
    ParseModelSpec("input { channels: 1 height: 28 width: 28 }\nlayer { conv { filtrs: 3 } }",
                   "bad.txt");
    FAIL() << "misspelt field accepted";
  } catch (const ModelSpecError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("bad.txt"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("line 2"));
  }
  EXPECT_THROW(ParseModelSpec("layer { relu {} }", "noinput"), ModelSpecError);
  // A kernel larger than its input: the layer is named.
  try {
    BuildModel(ParseModelSpec("input { channels: 1 height: 4 width: 4 }\n"
                              "layer { name: \"big\" conv { filters: 2 kernel: 9 } }\n"
                              "layer { flatten {} } layer { dense { units: 2 } }",
                              "x"),
               backend);
    FAIL() << "impossible conv accepted";
  } catch (const ModelSpecError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("big"));
  }
  // Logits must be flat.
  EXPECT_THROW(
      BuildModel(ParseModelSpec("input { channels: 1 height: 4 width: 4 } layer { relu {} }", "y"),
                 backend),
      ModelSpecError);
}

// Where LeNet-5's layers run: "cpu" and "opencl" put every layer there;
// "mixed" puts the convolutions and pools on OpenCL and the rest (dense
// layers, loss) on the CPU, so activations and gradients cross between
// backends both ways. Parameters always live on the CPU (home).
struct Placed {
  std::unique_ptr<kernels::Backend> cpu, cl;
  std::unique_ptr<Model> model;
};

// Null model when the placement needs OpenCL and there is none.
Placed BuildPlaced(const std::string& where, int threads = 2) {
  Placed p;
  p.cpu = test_support::MakeTestBackend("cpu" + std::to_string(threads));
  const proto::ModelSpec spec = LoadModelSpec("lenet5");
  std::vector<kernels::Backend*> placement(spec.layer_size(), p.cpu.get());
  if (where != "cpu") {
    p.cl = test_support::MakeTestBackend("opencl");
    if (!p.cl) return p;
    for (int i = 0; i < spec.layer_size(); ++i)
      if (where == "opencl" || spec.layer(i).has_conv() || spec.layer(i).has_maxpool())
        placement[i] = p.cl.get();
  }
  p.model = BuildModel(spec, *p.cpu, placement);
  return p;
}

class PlacedModel : public ::testing::TestWithParam<std::string> {};

TEST_P(PlacedModel, LeNet5GradientMatchesCentralDifferences) {
  Placed placed = BuildPlaced(GetParam());
  if (!placed.model) GTEST_SKIP() << test_support::kNoOpenCl;
  Model* model = placed.model.get();
  const int n = 3;
  model->Reserve(n);
  model->InitParams(42);
  SyntheticDataset data(n, model->input_shape(), 10, 5);
  std::vector<uint32_t> idx = {0, 1, 2};
  BatchBuffer batch(data.SampleShape(), n);
  batch.Fill(data, idx.data(), n);
  model->SetBatch(batch.images(), batch.labels(), n);

  std::vector<float> params(model->ParamCount()), grads(model->ParamCount());
  model->GetParams(params.data());
  model->ComputeGradients(1);
  model->GetGrads(grads.data());

  test_support::CheckOptions o;
  // Small steps: conv1's weights move thousands of ReLU inputs at once, so
  // larger ones cross kinks at most points.
  o.eps = 1e-3f;
  o.rel_tol = 2e-2;
  o.abs_tol = 1e-3;
  o.kink_abs = 5e-3;
  o.kink_rel = 5e-2;
  o.max_mismatch_fraction = 0.06;
  // Check every layer's parameters, not just a stride through the big fc1.
  size_t offset = 0;
  for (const auto& layer : model->layers()) {
    const size_t count = layer->ParamCount();
    if (count == 0) continue;
    std::vector<float> slice(params.begin() + offset, params.begin() + offset + count);
    std::vector<float> analytic(grads.begin() + offset, grads.begin() + offset + count);
    test_support::CompareDerivatives(
        layer->name(), slice, analytic,
        [&](const std::vector<float>& v) {
          std::vector<float> all = params;
          std::copy(v.begin(), v.end(), all.begin() + offset);
          model->SetParams(all.data());
        },
        [&]() { return model->Evaluate(nullptr) / n; }, o, 60);
    offset += count;
  }
}

// Trains `steps` SGD steps on synthetic data; returns the final parameters
// and the loss of every step.
struct RunResult {
  std::vector<float> params;
  std::vector<double> losses;
  double first_loss = 0, last_loss = 0;  // means of the first and last 10 steps
};

RunResult Train(Model& model, kernels::Backend& home, int steps, uint64_t seed) {
  const int b = 32;
  model.Reserve(b);
  model.InitParams(seed);
  OptimizerConfig oc;
  oc.lr = 0.05f;
  oc.momentum = 0.9f;
  auto opt = MakeOptimizer(oc, home, model.ParamCount());
  SyntheticDataset data(2048, model.input_shape(), 10, 9);
  BatchBuffer batch(data.SampleShape(), b);
  RunResult r;
  for (int s = 0; s < steps; ++s) {
    auto order = EpochOrder(data.Size(), seed, s / (2048 / b));
    batch.Fill(data, order.data() + (s % (2048 / b)) * b, b);
    model.SetBatch(batch.images(), batch.labels(), b);
    const double loss = model.ComputeGradients(s) / b;
    opt->Step(model.params(), model.grads());
    r.losses.push_back(loss);
    if (s < 10) r.first_loss += loss / 10;
    if (s >= steps - 10) r.last_loss += loss / 10;
  }
  r.params.resize(model.ParamCount());
  model.GetParams(r.params.data());
  return r;
}

RunResult Train(int threads, int steps, uint64_t seed) {
  kernels::CpuBackend backend(threads);
  auto model = BuildModel(LoadModelSpec("lenet5"), backend);
  return Train(*model, backend, steps, seed);
}

TEST_P(PlacedModel, FiftyStepsFollowTheCpuRun) {
  Placed placed = BuildPlaced(GetParam());
  if (!placed.model) GTEST_SKIP() << test_support::kNoOpenCl;
  const RunResult cpu = Train(2, 50, 6);
  const RunResult here = Train(*placed.model, *placed.cpu, 50, 6);
  ASSERT_EQ(here.losses.size(), cpu.losses.size());
  // Sums in a different order drift apart by rounding, and SGD with momentum
  // amplifies the drift a little each step; a wrong op diverges at once.
  for (size_t s = 0; s < cpu.losses.size(); ++s)
    EXPECT_NEAR(here.losses[s], cpu.losses[s], 1e-3 * (1.0 + s / 10.0)) << "step " << s;
  double max_diff = 0;
  for (size_t i = 0; i < cpu.params.size(); ++i)
    max_diff = std::max(max_diff, static_cast<double>(std::fabs(here.params[i] - cpu.params[i])));
  EXPECT_LT(max_diff, 1e-3);
  EXPECT_LT(here.last_loss, 0.5 * here.first_loss);
}

TEST_P(PlacedModel, ReportsWhereEachLayerRuns) {
  Placed placed = BuildPlaced(GetParam());
  if (!placed.model) GTEST_SKIP() << test_support::kNoOpenCl;
  const Model& model = *placed.model;
  // The summary the reports carry names every layer with where it runs.
  const std::string summary = model.PlacementSummary();
  auto where = test_support::PlacementOf(summary);
  ASSERT_EQ(where.size(), model.layers().size()) << summary;
  for (size_t i = 0; i < model.layers().size(); ++i)
    EXPECT_EQ(where[model.layers()[i]->name()], model.placement()[i]->Name()) << summary;
  EXPECT_EQ(where["conv1"], GetParam() == "cpu" ? "cpu" : "opencl") << summary;
  EXPECT_EQ(where["fc3"], GetParam() == "opencl" ? "opencl" : "cpu") << summary;
  // In-place layers run where their input lives.
  EXPECT_EQ(where["relu1"], where["conv1"]) << summary;
  EXPECT_EQ(model.Mixed(), GetParam() != "cpu");
}

// What a listener is told is final during backward must not change later:
// the worker sends those gradients to the hub while backward goes on.
TEST_P(PlacedModel, GradientsAnnouncedFinalAreFinal) {
  Placed placed = BuildPlaced(GetParam());
  if (!placed.model) GTEST_SKIP() << test_support::kNoOpenCl;
  Model& model = *placed.model;
  const int n = 4;
  model.Reserve(n);
  model.InitParams(7);
  SyntheticDataset data(n, model.input_shape(), 10, 3);
  std::vector<uint32_t> idx = {0, 1, 2, 3};
  BatchBuffer batch(data.SampleShape(), n);
  batch.Fill(data, idx.data(), n);
  model.SetBatch(batch.images(), batch.labels(), n);
  model.ComputeGradients(1);  // the buffer now holds another pass's gradients

  struct Snapshots final : GradientListener {
    explicit Snapshots(Model& m) : model(m) {}
    void OnGradientsFrom(size_t begin) override {
      std::vector<float> all(model.ParamCount());
      model.GetGrads(all.data());
      taken.emplace_back(begin,
                         std::vector<float>(all.begin() + static_cast<long>(begin), all.end()));
    }
    Model& model;
    std::vector<std::pair<size_t, std::vector<float>>> taken;
  } listener(model);
  batch.Fill(data, idx.data(), 2);  // a different batch, so every gradient changes
  model.SetBatch(batch.images(), batch.labels(), 2);
  model.ComputeGradients(2, nullptr, &listener);
  std::vector<float> final_grads(model.ParamCount());
  model.GetGrads(final_grads.data());

  ASSERT_FALSE(listener.taken.empty());
  EXPECT_EQ(listener.taken.back().first, 0u);
  // On one backend it hears after every parameterised layer, last first.
  if (!model.Mixed()) {
    EXPECT_EQ(listener.taken.size(), 5u + 1u);  // LeNet-5's five, then 0
  }
  size_t previous = model.ParamCount() + 1;
  for (const auto& [begin, values] : listener.taken) {
    EXPECT_LE(begin, previous);
    previous = begin;
    for (size_t i = 0; i < values.size(); ++i)
      ASSERT_EQ(values[i], final_grads[begin + i]) << "gradient " << begin + i << " changed";
  }
}

INSTANTIATE_TEST_SUITE_P(Placements, PlacedModel, ::testing::Values("cpu", "opencl", "mixed"),
                         [](const auto& info) { return info.param; });

TEST(ModelTraining, LossFalls) {
  const RunResult r = Train(2, 120, 3);
  EXPECT_GT(r.first_loss, 1.5);
  EXPECT_LT(r.last_loss, 0.3 * r.first_loss);
}

TEST(ModelTraining, SameSeedSameWeightsWhateverTheThreadCount) {
  const RunResult a = Train(1, 15, 4);
  const RunResult b = Train(3, 15, 4);
  const RunResult c = Train(1, 15, 5);
  ASSERT_EQ(a.params.size(), b.params.size());
  double max_diff = 0, seed_diff = 0;
  for (size_t i = 0; i < a.params.size(); ++i) {
    max_diff = std::max(max_diff, static_cast<double>(std::fabs(a.params[i] - b.params[i])));
    seed_diff = std::max(seed_diff, static_cast<double>(std::fabs(a.params[i] - c.params[i])));
  }
  EXPECT_LT(max_diff, 1e-4);
  EXPECT_GT(seed_diff, 1e-3);
}

}  // namespace
}  // namespace mt
