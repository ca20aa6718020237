// Writing an ONNX graph: nodes, initializers and attributes, for the export
// of each layer kind (model_io/onnx_layers/).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "model_io/onnx_tensors.h"
#include "onnx/onnx_pb.h"

namespace mt {

class GraphWriter {
 public:
  explicit GraphWriter(onnx::GraphProto& g) : g_(g) {}

  onnx::NodeProto& Node(const std::string& op, const std::string& name,
                        std::initializer_list<std::string> inputs, const std::string& output) {
    onnx::NodeProto& n = *g_.add_node();
    n.set_op_type(op);
    n.set_name(name);
    for (const std::string& in : inputs) n.add_input(in);
    n.add_output(output);
    return n;
  }
  // An initializer; returns its name.
  std::string Weight(const std::string& name, const std::vector<int64_t>& dims, const float* data) {
    *g_.add_initializer() = FloatTensor(name, dims, data);
    return name;
  }
  std::string Scalar(const std::string& name, float value) { return Weight(name, {}, &value); }

 private:
  onnx::GraphProto& g_;
};

inline void SetInts(onnx::NodeProto& n, const char* name, std::vector<int64_t> values) {
  onnx::AttributeProto& a = *n.add_attribute();
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a.add_ints(v);
}

inline void SetInt(onnx::NodeProto& n, const char* name, int64_t value) {
  onnx::AttributeProto& a = *n.add_attribute();
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(value);
}

inline void SetFloat(onnx::NodeProto& n, const char* name, float value) {
  onnx::AttributeProto& a = *n.add_attribute();
  a.set_name(name);
  a.set_type(onnx::AttributeProto::FLOAT);
  a.set_f(value);
}

}  // namespace mt
