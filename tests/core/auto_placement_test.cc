// --device auto's placement: every layer timed on every candidate, in-place
// layers kept with their input, the chosen placement never one that measured
// slower than all-CPU, and the chosen model computing the CPU's gradients.
// And placement on a backend that lacks ops: the layers (or the loss) that
// need them run on the CPU, say so, and train exactly as on the CPU; auto
// never puts a layer where its ops are missing.
#include "core/model/auto_placement.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "core/model/model_spec.h"
#include "core/optim/optimizer.h"
#include "core/train/batch_buffer.h"
#include "tests/support/files.h"
#include "tests/support/synthetic_dataset.h"
#include "tests/support/test_backends.h"

namespace mt {
namespace {

using ::testing::HasSubstr;

// The names of a choice's whole-step candidates, in order.
std::vector<std::string> CandidateNames(const PlacementChoice& c) {
  std::vector<std::string> names;
  for (const PlacementCandidate& k : c.candidates) names.push_back(k.name);
  return names;
}

struct Batch {
  explicit Batch(int n) : data(n, Shape{1, 28, 28}, 10, 3), buffer(data.SampleShape(), n) {
    std::vector<uint32_t> idx(n);
    for (int i = 0; i < n; ++i) idx[i] = static_cast<uint32_t>(i);
    buffer.Fill(data, idx.data(), n);
  }
  test_support::SyntheticDataset data;
  BatchBuffer buffer;
};

void ExpectWellFormed(const PlacementChoice& c, const proto::ModelSpec& spec, size_t candidates) {
  ASSERT_EQ(c.rows.size(), static_cast<size_t>(spec.layer_size()));
  ASSERT_EQ(c.placement.size(), c.rows.size());
  for (const PlacementRow& r : c.rows) {
    ASSERT_EQ(r.ms.size(), candidates) << r.layer;
    for (double ms : r.ms) EXPECT_TRUE(ms >= 0.0 || ms == kNotRun) << r.layer;
  }
  ASSERT_GE(c.candidates.size(), candidates);
  EXPECT_EQ(c.placement, c.candidates[c.chosen].placement);
  for (const PlacementCandidate& k : c.candidates) EXPECT_GT(k.step_ms, 0.0) << k.name;
  // Never a placement that measured slower than all-CPU.
  EXPECT_LE(c.candidates[c.chosen].step_ms, c.candidates[0].step_ms);
  for (int i = 0; i < spec.layer_size(); ++i) {
    if (spec.layer(i).has_relu() || spec.layer(i).has_flatten()) {
      EXPECT_EQ(c.placement[i], c.placement[i - 1])
          << "in-place layer " << i + 1 << " left its input";
    }
  }
}

// LeNet-5's placement among `candidates` (the first one home) on a batch of n.
PlacementChoice ChooseForLeNet(const std::vector<kernels::Backend*>& candidates, Batch& b, int n) {
  const proto::ModelSpec spec = LoadModelSpec("lenet5");
  PlacementChoice c = ChoosePlacement(spec, *candidates[0], candidates, b.buffer.images(),
                                      b.buffer.labels(), n, 1, 2);
  ExpectWellFormed(c, spec, candidates.size());
  return c;
}

TEST(AutoPlacement, CpuOnlyKeepsEveryLayerOnTheCpu) {
  auto cpu = test_support::MakeTestBackend("cpu1");
  Batch b(16);
  const PlacementChoice c = ChooseForLeNet({cpu.get()}, b, 16);
  for (auto* p : c.placement) EXPECT_EQ(p, cpu.get());
  EXPECT_EQ(c.chosen, 0);
  // The table mtworker --device auto prints: a row per layer, the choice marked.
  const std::string table = c.Table({cpu.get()});
  EXPECT_THAT(table, HasSubstr("\nconv1 "));
  EXPECT_THAT(table, HasSubstr("<- chosen"));
}

TEST(AutoPlacement, CpuAndOpenClPicksAPlacementThatComputesTheSameGradients) {
  auto cpu = test_support::MakeTestBackend("cpu1");
  auto cl = test_support::MakeTestBackend("opencl");
  if (!cl) GTEST_SKIP() << test_support::kNoOpenCl;
  const proto::ModelSpec spec = LoadModelSpec("lenet5");
  const int n = 16;
  Batch b(n);
  const PlacementChoice c = ChooseForLeNet({cpu.get(), cl.get()}, b, n);
  EXPECT_THAT(CandidateNames(c), ::testing::Contains("all opencl"));

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
  for (size_t i = 0; i < g_ref.size(); ++i)
    ASSERT_NEAR(g_chosen[i], g_ref[i], 1e-4 + 1e-3 * std::fabs(g_ref[i])) << i;
}

TEST(AutoPlacement, NeverPutsALayerWhereItsOpsAreMissing) {
  auto cpu = test_support::MakeTestBackend("cpu1");
  auto limited = test_support::MakeCpuWithout({kernels::Op::kConv2dForward}, "limited", 1);
  const proto::ModelSpec spec = LoadModelSpec("lenet5");
  Batch b(16);
  const PlacementChoice c = ChooseForLeNet({cpu.get(), limited.get()}, b, 16);
  for (int i = 0; i < spec.layer_size(); ++i) {
    if (!spec.layer(i).has_conv()) continue;
    EXPECT_EQ(c.rows[i].ms[1], kNotRun) << c.rows[i].layer;
    EXPECT_EQ(c.placement[i], cpu.get()) << c.rows[i].layer;
    for (const PlacementCandidate& k : c.candidates)
      EXPECT_EQ(k.placement[i], cpu.get())
          << k.name << " puts " << c.rows[i].layer << " on " << k.placement[i]->Name();
  }
  EXPECT_GE(c.rows[7].ms[1], 0.0) << "fc1 was not timed on the limited backend";
  EXPECT_THAT(CandidateNames(c), ::testing::Contains("all limited where it can"));
  // What the table shows for a layer that cannot run there.
  EXPECT_THAT(c.Table({cpu.get(), limited.get()}), HasSubstr(" n/a "));
}

// Trains `steps` SGD steps on one synthetic batch; returns the parameters,
// the losses, and the predictions and loss of an evaluation pass after.
struct Trained {
  std::vector<float> params;
  std::vector<double> losses;
  std::vector<int32_t> predictions;
};

Trained Train(Model& model, kernels::Backend& home, int steps) {
  const int n = 16;
  Batch b(n);
  model.Reserve(n);
  model.InitParams(7);
  auto opt = MakeOptimizer(OptimizerConfig{}, home, model.ParamCount());
  Trained t;
  for (int s = 0; s < steps; ++s) {
    model.SetBatch(b.buffer.images(), b.buffer.labels(), n);
    t.losses.push_back(model.ComputeGradients(s));
    opt->Step(model.params(), model.grads());
  }
  t.predictions.resize(n);
  t.losses.push_back(model.Evaluate(t.predictions.data()));
  t.params.resize(model.ParamCount());
  model.GetParams(t.params.data());
  return t;
}

// A device lacking `lacks`, with LeNet-5 placed all on it.
struct LackingCase {
  std::string device;  // "cpu" or "opencl"
  kernels::OpSet lacks;
  std::vector<std::string> on_home;    // the steps that run on the CPU instead
  std::vector<std::string> fell_back;  // those of them that lack ops (not just follow their input)
  std::string name;
};

void PrintTo(const LackingCase& c, std::ostream* os) { *os << c.name; }

const std::vector<std::string> kRelus = {"relu1", "relu2", "relu3", "relu4"};

class PlacedOnALimitedBackend : public ::testing::TestWithParam<LackingCase> {};

TEST_P(PlacedOnALimitedBackend, StepsLackingOpsRunOnTheCpuAndTrainAsOnTheCpu) {
  const LackingCase& lc = GetParam();
  const int threads = 2;
  // The home CPU checks, as the limited backend does, that every op gets its own memory.
  test_support::LimitedBackend<kernels::CpuBackend> cpu("cpu", {}, threads);
  std::unique_ptr<kernels::Backend> device;
  if (lc.device == "cpu") {
    // The CPU backend itself, so the results must be bit-identical.
    device = test_support::MakeCpuWithout(lc.lacks, "limited", threads);
  } else {
#if MT_HAVE_OPENCL
    if (!kernels::ListOpenClDevices().empty())
      device = std::make_unique<test_support::LimitedBackend<kernels::OpenClBackend>>(
          "limited", lc.lacks, kernels::DefaultOpenClDevice());
#endif
    if (!device) GTEST_SKIP() << test_support::kNoOpenCl;
  }
  const proto::ModelSpec spec = LoadModelSpec("lenet5");
  auto model =
      BuildModel(spec, cpu, std::vector<kernels::Backend*>(spec.layer_size(), device.get()));

  const std::string summary = model->PlacementSummary();
  for (size_t i = 0; i < model->layers().size(); ++i) {
    const std::string& name = model->layers()[i]->name();
    const bool home = std::find(lc.on_home.begin(), lc.on_home.end(), name) != lc.on_home.end();
    EXPECT_EQ(model->placement()[i], home ? static_cast<kernels::Backend*>(&cpu) : device.get())
        << name << ": " << summary;
  }
  const bool loss_home =
      std::find(lc.on_home.begin(), lc.on_home.end(), "loss") != lc.on_home.end();
  EXPECT_EQ(&model->loss_backend(), loss_home ? static_cast<kernels::Backend*>(&cpu) : device.get())
      << summary;
  ASSERT_EQ(model->fallbacks().size(), lc.fell_back.size()) << summary;
  for (size_t i = 0; i < lc.fell_back.size(); ++i) {
    const PlacementFallback& f = model->fallbacks()[i];
    EXPECT_EQ(f.name, lc.fell_back[i]);
    EXPECT_EQ(f.wanted, "limited");
    // The report's placement says why the step moved.
    EXPECT_EQ(test_support::PlacementOf(summary)[f.name],
              "cpu(limited lacks " + f.missing.Names("+") + ")")
        << summary;
    EXPECT_FALSE(f.missing.empty());
  }

  kernels::CpuBackend reference_cpu(threads);
  auto reference = BuildModel(spec, reference_cpu);
  const Trained want = Train(*reference, reference_cpu, 8);
  const Trained got = Train(*model, cpu, 8);
  EXPECT_EQ(got.predictions, want.predictions);
  ASSERT_EQ(got.losses.size(), want.losses.size());
  if (lc.device == "cpu") {
    EXPECT_EQ(got.losses, want.losses);
    EXPECT_EQ(got.params, want.params);
    return;
  }
  for (size_t s = 0; s < want.losses.size(); ++s)
    EXPECT_NEAR(got.losses[s], want.losses[s], 1e-3) << "step " << s;
  for (size_t i = 0; i < want.params.size(); ++i)
    ASSERT_NEAR(got.params[i], want.params[i], 1e-3) << i;
}

INSTANTIATE_TEST_SUITE_P(
    Lacking, PlacedOnALimitedBackend,
    ::testing::Values(
        // A layer with parameters and its in-place ReLU after it, which then runs on the CPU too.
        LackingCase{"cpu",
                    {kernels::Op::kConv2dBackward},
                    {"conv1", "relu1", "conv2", "relu2"},
                    {"conv1", "conv2"},
                    "cpu_conv"},
        // In-place layers alone: they run out of place on the CPU, between layers on the device.
        LackingCase{"cpu", {kernels::Op::kReluForward}, kRelus, kRelus, "cpu_relu"},
        LackingCase{"cpu",
                    {kernels::Op::kMaxPoolBackward},
                    {"pool1", "pool2", "flatten"},
                    {"pool1", "pool2"},
                    "cpu_pool"},
        // The loss: the logits cross to the CPU and their gradient back.
        LackingCase{"cpu", {kernels::Op::kArgmaxRows}, {"loss"}, {"loss"}, "cpu_loss"},
        LackingCase{"opencl",
                    {kernels::Op::kConv2dBackward},
                    {"conv1", "relu1", "conv2", "relu2"},
                    {"conv1", "conv2"},
                    "opencl_conv"},
        LackingCase{"opencl", {kernels::Op::kReluBackward}, kRelus, kRelus, "opencl_relu"}),
    [](const auto& info) { return info.param.name; });

TEST(ModelPlacement, AHomeBackendLackingAnOpIsAnError) {
  auto home = test_support::MakeCpuWithout({kernels::Op::kReluBackward}, "limited");
  try {
    BuildModel(LoadModelSpec("lenet5"), *home);
    FAIL() << "a model whose home lacks relu_backward was built";
  } catch (const ModelSpecError& e) {
    EXPECT_THAT(e.what(), HasSubstr("relu1 needs relu_backward"));
  }
}

}  // namespace
}  // namespace mt
