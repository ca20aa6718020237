// Specs, weights and hand-built ONNX graphs for the model_io tests.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/model/model_spec.h"
#include "model_io/model_weights.h"
#include "model_io/onnx_tensors.h"
#include "model_io/weights_fit.h"
#include "onnx/onnx_pb.h"

namespace mt::test_support {

// Conv without bias, batch norm, ReLU6, a depthwise conv, a skip connection
// (Add), pools, global pooling, dropout and a dense head.
constexpr const char* kResidualSpec = R"(
name: "residual"
input { channels: 3 height: 8 width: 8 }
layer { name: "stem" conv { filters: 8 kernel: 3 padding: 1 no_bias: true } }
layer { name: "bn1" batchnorm {} }
layer { name: "act1" relu6 {} }
layer { name: "dw" conv { filters: 8 kernel: 3 padding: 1 groups: 8 } }
layer { name: "bn2" batchnorm { epsilon: 0.001 momentum: 0.01 } }
layer { name: "sum" add {} inputs: "act1" inputs: "bn2" }
layer { name: "relu" relu {} }
layer { name: "pool" avgpool { size: 2 } }
layer { name: "mp" maxpool { size: 2 stride: 1 } }
layer { name: "gap" global_avgpool {} }
layer { name: "drop" dropout { rate: 0.25 } }
layer { name: "fc" dense { units: 5 } }
)";

constexpr const char* kDenseChainSpec = R"(
name: "dense_chain"
input { channels: 1 height: 4 width: 4 }
layer { name: "flat" flatten {} }
layer { name: "fc1" dense { units: 16 } }
layer { name: "r1" relu {} }
layer { name: "drop" dropout { rate: 0.5 } }
layer { name: "fc2" dense { units: 3 } }
)";

// Three branches summed: exported as Sum.
constexpr const char* kThreeWaySumSpec = R"(
name: "three_way"
input { channels: 2 height: 4 width: 4 }
layer { name: "a" conv { filters: 4 kernel: 1 } }
layer { name: "b" conv { filters: 4 kernel: 3 padding: 1 } inputs: "input" }
layer { name: "c" conv { filters: 4 kernel: 1 } inputs: "input" }
layer { name: "s" add {} inputs: "a" inputs: "b" inputs: "c" }
layer { name: "f" flatten {} }
layer { name: "out" dense { units: 2 } }
)";

// Initialised parameters and random running statistics (variance > 0).
inline ModelWeights RandomWeights(const proto::ModelSpec& spec, uint64_t seed) {
  const BuiltModel built = BuildOnCpu(spec);
  built.model->InitParams(seed);
  ModelWeights w;
  w.params.resize(built.model->ParamCount());
  built.model->GetParams(w.params.data());
  std::mt19937 rng(static_cast<uint32_t>(seed));
  std::uniform_real_distribution<float> u(0.1f, 2.0f);
  // Biases start at zero; make them count in the comparisons.
  for (float& p : w.params) p += u(rng) * 0.01f;
  w.running_stats.resize(built.model->RunningStatCount());
  for (float& s : w.running_stats) s = u(rng);
  return w;
}

// Hand-built ONNX graphs, as PyTorch's exporter writes them.
struct OnnxBuilder {
  onnx::ModelProto model;
  onnx::GraphProto& g;

  explicit OnnxBuilder(const std::vector<int64_t>& input_chw, int64_t opset = 13)
      : g(*model.mutable_graph()) {
    model.set_ir_version(7);
    auto* o = model.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    g.set_name("handmade");
    auto* in = g.add_input();
    in->set_name("x");
    auto* t = in->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    t->mutable_shape()->add_dim()->set_dim_param("batch");
    for (int64_t d : input_chw) t->mutable_shape()->add_dim()->set_dim_value(d);
  }
  onnx::NodeProto& Node(const std::string& op, const std::string& name,
                        const std::vector<std::string>& inputs, const std::string& output) {
    auto& n = *g.add_node();
    n.set_op_type(op);
    n.set_name(name);
    for (const auto& i : inputs) n.add_input(i);
    n.add_output(output);
    return n;
  }
  void Weight(const std::string& name, const std::vector<int64_t>& dims,
              const std::vector<float>& v) {
    *g.add_initializer() = FloatTensor(name, dims, v.data());
  }
  void Ints(const std::string& name, const std::vector<int64_t>& v) {
    auto& t = *g.add_initializer();
    t.set_name(name);
    t.set_data_type(onnx::TensorProto::INT64);
    t.add_dims(static_cast<int64_t>(v.size()));
    for (int64_t x : v) t.add_int64_data(x);
  }
  void Output(const std::string& name) { g.add_output()->set_name(name); }
  std::string Bytes() const { return model.SerializeAsString(); }
};

inline void SetInts(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  auto& a = *n.add_attribute();
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a.add_ints(x);
}

inline void SetInt(onnx::NodeProto& n, const std::string& name, int64_t v) {
  auto& a = *n.add_attribute();
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(v);
}

inline void SetString(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto& a = *n.add_attribute();
  a.set_name(name);
  a.set_type(onnx::AttributeProto::STRING);
  a.set_s(v);
}

inline std::vector<float> Iota(size_t n, float scale = 0.01f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>(i % 97) - 0.3f;
  return v;
}

}  // namespace mt::test_support
