// Hostile ONNX files, each small for what it asks of an importer (issue 32):
// the unit tests of onnx_limits_test.cc import them, and the ONNX fuzz
// harness writes them (scaled down where they are large) as its seeds.
// Each is a valid ONNX graph on an input [N, 1, 4, 4].
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "model_io/onnx_tensors.h"
#include "onnx/onnx_pb.h"
#include "tests/modeltool/model_io_fixtures.h"

namespace mt::hostile_onnx {

inline onnx::ModelProto Model() { return test_support::OnnxBuilder({1, 4, 4}).model; }

inline onnx::NodeProto& Node(onnx::ModelProto& m, const std::string& op, const std::string& name,
                             const std::vector<std::string>& inputs, const std::string& output) {
  auto& n = *m.mutable_graph()->add_node();
  n.set_op_type(op);
  n.set_name(name);
  for (const std::string& i : inputs) n.add_input(i);
  n.add_output(output);
  return n;
}

// x -> Flatten -> Gemm(weight [units, 16]) -> y, the graph's output: what
// the hostile parts hang beside or before.
inline void DenseHead(onnx::ModelProto& m, const std::string& from, const std::string& weight,
                      int64_t units) {
  auto& g = *m.mutable_graph();
  if (weight == "fc.weight") {
    const std::vector<float> w(static_cast<size_t>(units * 16), 0.01f);
    *g.add_initializer() = FloatTensor("fc.weight", {units, 16}, w.data());
  }
  auto& gemm = Node(m, "Gemm", "fc", {from, weight}, "y");
  auto* a = gemm.add_attribute();
  a->set_name("transB");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(1);
  g.add_output()->set_name("y");
}

// `levels` Concats of 16 copies of the one before, from a one-value shape
// constant: 16^levels values (8 levels: 4.3G int64s, 34 GB) from a few
// hundred bytes.
inline onnx::ModelProto ConcatBomb(int levels) {
  onnx::ModelProto m = Model();
  auto& c0 = *m.mutable_graph()->add_initializer();
  c0.set_name("c0");
  c0.set_data_type(onnx::TensorProto::INT64);
  c0.add_dims(1);
  c0.add_int64_data(1);
  for (int k = 0; k < levels; ++k) {
    auto& n = Node(m, "Concat", "cat" + std::to_string(k), {}, "c" + std::to_string(k + 1));
    for (int i = 0; i < 16; ++i) n.add_input("c" + std::to_string(k));
    auto* axis = n.add_attribute();
    axis->set_name("axis");
    axis->set_type(onnx::AttributeProto::INT);
    axis->set_i(0);
  }
  Node(m, "Flatten", "flat", {"x"}, "fx");
  DenseHead(m, "fx", "fc.weight", 2);
  return m;
}

// One constant of `floats` values passed through `copies` Identity nodes,
// the last of which a dense layer reads: an importer that copies the
// constant at each holds `copies` of it (4 MB x 3,000: 12 GB).
inline onnx::ModelProto IdentityCopies(int64_t floats, int copies) {
  onnx::ModelProto m = Model();
  const std::vector<float> w(static_cast<size_t>(floats), 0.5f);
  *m.mutable_graph()->add_initializer() = FloatTensor("w0", {floats / 16, 16}, w.data());
  for (int k = 0; k < copies; ++k)
    Node(m, "Identity", "id" + std::to_string(k), {"w" + std::to_string(k)},
         "w" + std::to_string(k + 1));
  Node(m, "Flatten", "flat", {"x"}, "fx");
  DenseHead(m, "fx", "w" + std::to_string(copies), floats / 16);
  return m;
}

// Flatten, `layers` Relu nodes without names, a dense head: every layer is
// named from its op ("relu", "relu_2", ...).
inline onnx::ModelProto UnnamedChain(int layers) {
  onnx::ModelProto m = Model();
  Node(m, "Flatten", "", {"x"}, "t0");
  for (int k = 0; k < layers; ++k)
    Node(m, "Relu", "", {"t" + std::to_string(k)}, "t" + std::to_string(k + 1));
  DenseHead(m, "t" + std::to_string(layers), "fc.weight", 2);
  return m;
}

// A dense head whose weight holds `bad` at [1, 3].
inline onnx::ModelProto NonFiniteWeight(float bad) {
  onnx::ModelProto m = Model();
  Node(m, "Flatten", "flat", {"x"}, "fx");
  std::vector<float> w(32, 0.01f);
  w[16 + 3] = bad;
  *m.mutable_graph()->add_initializer() = FloatTensor("fc.weight", {2, 16}, w.data());
  DenseHead(m, "fx", "fc.weight", 2);
  return m;
}

// A Gemm whose weight is [units, 0]: no values in the file, `units` zero
// weights (and as many biases) for the importer to make.
inline onnx::ModelProto EmptyWideWeight(int64_t units) {
  onnx::ModelProto m = Model();
  Node(m, "Flatten", "flat", {"x"}, "fx");
  auto& w = *m.mutable_graph()->add_initializer();
  w.set_name("wide");
  w.set_data_type(onnx::TensorProto::FLOAT);
  w.add_dims(units);
  w.add_dims(0);
  DenseHead(m, "fx", "wide", units);
  return m;
}

}  // namespace mt::hostile_onnx
