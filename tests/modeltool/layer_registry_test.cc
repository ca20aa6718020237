// Every layer kind of model.proto's `Layer.kind` oneof, found by reflection,
// has a complete registry entry (core/layers/layer_registry.h: factory,
// FLOPs, example) and ONNX translations both ways (model_io/onnx_layers/),
// and each kind's example passes a numerical gradient check on every backend
// that has its ops, an ONNX round trip, and trains on a backend lacking its
// ops as on the CPU (the CPU fallback of placement). A kind added to the
// proto without its entry fails here.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/layers/layer_registry.h"
#include "core/model/model_spec.h"
#include "core/optim/optimizer.h"
#include "core/profile/layer_flops.h"
#include "core/train/batch_buffer.h"
#include "model_io/onnx_export.h"
#include "model_io/onnx_import.h"
#include "model_io/onnx_layer_translators.h"
#include "tests/modeltool/model_io_fixtures.h"
#include "tests/support/gradient_check.h"
#include "tests/support/synthetic_dataset.h"
#include "tests/support/test_backends.h"

namespace mt {
namespace {

std::vector<const google::protobuf::FieldDescriptor*> KindFields() {
  const auto* oneof = proto::Layer::descriptor()->FindOneofByName("kind");
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  for (int i = 0; i < oneof->field_count(); ++i) fields.push_back(oneof->field(i));
  return fields;
}

std::vector<std::string> KindNames() {
  std::vector<std::string> names;
  for (const auto* f : KindFields()) names.push_back(f->name());
  return names;
}

proto::Layer::KindCase KindNamed(const std::string& name) {
  return static_cast<proto::Layer::KindCase>(
      proto::Layer::descriptor()->FindFieldByName(name)->number());
}

// The kind's example on a [2, 6, 6] input with a dense head (and a flatten
// before it where the example leaves the features spatial): a whole model.
proto::ModelSpec ExampleSpec(const LayerKind& kind) {
  const std::string name = LayerKindName(kind.kind);
  const std::string text =
      "name: \"probe_" + name + "\" input { channels: 2 height: 6 width: 6 } " + kind.example;
  const std::string head = " layer { name: \"head\" dense { units: 3 } }";
  kernels::CpuBackend cpu(1);
  try {
    const proto::ModelSpec flat = ParseModelSpec(text + head, name);
    BuildModel(flat, cpu);
    return flat;
  } catch (const ModelSpecError&) {
    return ParseModelSpec(text + " layer { name: \"head_flat\" flatten {} }" + head, name);
  }
}

// The index of the example's (last) layer of `kind`.
int ProbeIndex(const proto::ModelSpec& spec, proto::Layer::KindCase kind) {
  for (int i = spec.layer_size() - 1; i >= 0; --i)
    if (spec.layer(i).kind_case() == kind) return i;
  return -1;
}

TEST(LayerRegistry, EveryKindOfTheProtoHasACompleteEntry) {
  std::string missing;
  for (const auto* field : KindFields()) {
    const auto kind = static_cast<proto::Layer::KindCase>(field->number());
    const LayerKind* entry = FindLayerKind(kind);
    std::vector<std::string> lacks;
    if (!entry) {
      lacks.push_back("a registry entry (MT_REGISTER_LAYER_KIND in core/layers/)");
    } else {
      if (!entry->make) lacks.push_back("a factory");
      if (!entry->forward_flops) lacks.push_back("FLOPs");
      if (!entry->example) lacks.push_back("an example");
    }
    if (!FindOnnxExport(kind))
      lacks.push_back("an ONNX export (model_io/onnx_layers/, or LayerKind::onnx)");
    std::string list;
    for (const std::string& l : lacks) list += (list.empty() ? " " : ", ") + l;
    if (!lacks.empty()) missing += "\n  " + field->name() + " lacks" + list;
  }
  EXPECT_TRUE(missing.empty()) << "layer kinds without a complete registry entry:" << missing;
  // And no entry for a kind the proto does not have.
  for (const LayerKind* entry : LayerKinds())
    EXPECT_NE(proto::Layer::descriptor()->FindFieldByNumber(entry->kind), nullptr);
}

class EachKind : public ::testing::TestWithParam<std::string> {
 protected:
  // Null, with a failure, when the kind has no complete entry.
  const LayerKind* Entry() {
    const LayerKind* entry = FindLayerKind(KindNamed(GetParam()));
    if (entry && entry->make && entry->example) return entry;
    ADD_FAILURE() << GetParam() << " has no complete registry entry";
    return nullptr;
  }
};

TEST_P(EachKind, BuildsTheLayerItNamesAndStatesItsFlops) {
  const LayerKind* entry = Entry();
  if (!entry) return;
  const LayerKind& kind = *entry;
  const proto::ModelSpec spec = ExampleSpec(kind);
  const int probe = ProbeIndex(spec, kind.kind);
  ASSERT_GE(probe, 0) << "the example of " << GetParam() << " has no layer of that kind";
  EXPECT_EQ(MakeLayer(spec.layer(probe))->Type(), GetParam());
  kernels::CpuBackend cpu(1);
  auto model = BuildModel(spec, cpu);
  const std::vector<int64_t> flops = ForwardFlopsPerSample(spec, *model);
  EXPECT_GE(flops[probe], 0);
}

TEST_P(EachKind, OnnxRoundTripGivesTheSameSpecAndWeights) {
  const LayerKind* entry = Entry();
  if (!entry) return;
  const LayerKind& kind = *entry;
  const proto::ModelSpec spec = ExampleSpec(kind);
  const ModelWeights weights = test_support::RandomWeights(spec, 7);
  const std::string bytes = ExportOnnxBytes(spec, weights);
  const LoadedModel back = ImportOnnxBytes(bytes, GetParam() + ".onnx");
  EXPECT_EQ(ModelSpecToText(back.spec), ModelSpecToText(spec));
  ASSERT_TRUE(back.weights.has_value());
  EXPECT_EQ(back.weights->params, weights.params);
  EXPECT_EQ(back.weights->running_stats, weights.running_stats);
  EXPECT_EQ(ExportOnnxBytes(back.spec, *back.weights), bytes);
}

// Three SGD steps on one synthetic batch; the parameters after them.
std::vector<float> TrainedParams(Model& model, kernels::Backend& home) {
  const int n = 8;
  test_support::SyntheticDataset data(n, model.input_shape(), 3, 3);
  BatchBuffer batch(data.SampleShape(), n);
  std::vector<uint32_t> indices(n);
  for (int i = 0; i < n; ++i) indices[i] = static_cast<uint32_t>(i);
  batch.Fill(data, indices.data(), n);
  model.Reserve(n);
  model.InitParams(7);
  auto opt = MakeOptimizer(OptimizerConfig{}, home, model.ParamCount());
  for (int step = 0; step < 3; ++step) {
    model.SetBatch(batch.images(), batch.labels(), n);
    model.ComputeGradients(step);
    opt->Step(model.params(), model.grads());
  }
  std::vector<float> params(model.ParamCount());
  model.GetParams(params.data());
  return params;
}

// Placed on a backend that lacks the kind's ops, the layer runs on the home
// CPU instead, and the model trains bit for bit as on the CPU alone.
TEST_P(EachKind, FallsBackToTheCpuOnABackendLackingItsOps) {
  const LayerKind* entry = Entry();
  if (!entry) return;
  const LayerKind& kind = *entry;
  const proto::ModelSpec spec = ExampleSpec(kind);
  const int probe = ProbeIndex(spec, kind.kind);
  const kernels::OpSet ops = MakeLayer(spec.layer(probe))->Ops();
  // The home CPU checks, as the limited backend does, that every op gets its own memory.
  test_support::LimitedBackend<kernels::CpuBackend> home("cpu", {}, 1);
  auto device = test_support::MakeCpuWithout(ops, "limited", 1);
  auto model =
      BuildModel(spec, home, std::vector<kernels::Backend*>(spec.layer_size(), device.get()));
  if (!ops.empty()) {
    EXPECT_EQ(model->placement()[probe], &home) << model->PlacementSummary();
    const auto& fallbacks = model->fallbacks();
    EXPECT_TRUE(std::any_of(fallbacks.begin(), fallbacks.end(), [&](const PlacementFallback& f) {
      return f.name == spec.layer(probe).name();
    })) << model->PlacementSummary();
  }
  kernels::CpuBackend cpu(1);
  auto reference = BuildModel(spec, cpu);
  EXPECT_EQ(TrainedParams(*model, home), TrainedParams(*reference, cpu));
}

INSTANTIATE_TEST_SUITE_P(Kinds, EachKind, ::testing::ValuesIn(KindNames()),
                         [](const auto& info) { return info.param; });

// (kind, backend): the backend's name in the test's name marks the OpenCL
// cases, which the test labels run as integration tests.
class EachKindOnEachBackend
    : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(EachKindOnEachBackend, GradientsMatchCentralDifferences) {
  const auto& [name, backend_name] = GetParam();
  const LayerKind* kind = FindLayerKind(KindNamed(name));
  ASSERT_TRUE(kind && kind->make && kind->example) << name << " has no complete registry entry";
  auto backend = test_support::MakeTestBackend(backend_name);
  if (!backend) GTEST_SKIP() << test_support::kNoOpenCl;
  const proto::ModelSpec spec = ExampleSpec(*kind);
  const int probe = ProbeIndex(spec, kind->kind);
  kernels::CpuBackend cpu(1);
  auto model = BuildModel(spec, cpu);
  std::vector<Shape> in;
  size_t count = 0;
  for (int v : model->layer_inputs(probe)) {
    in.push_back(v < 0 ? model->input_shape() : model->layer_output_shape(v));
    count += in.back().count();
  }
  auto layer = kind->make(spec.layer(probe));
  if (!backend->SupportedOps().Contains(layer->Ops()))
    GTEST_SKIP() << backend_name << " lacks " << (layer->Ops() - backend->SupportedOps()).Names();
  const int batch = 3;
  test_support::CheckOptions o;
  o.bind_running_stats = true;
  test_support::CheckLayerGradientsOnInputs(*layer, in, batch, *backend,
                                            test_support::RandomVector(count * batch, 5, -2, 7), o);
}

INSTANTIATE_TEST_SUITE_P(Kinds, EachKindOnEachBackend,
                         ::testing::Combine(::testing::ValuesIn(KindNames()),
                                            ::testing::Values("cpu1", "cpu3", "opencl")),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" + std::get<1>(info.param);
                         });

}  // namespace
}  // namespace mt
