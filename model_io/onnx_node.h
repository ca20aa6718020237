// One ONNX node as the importer reads it: its attributes with their ONNX
// defaults, and errors that name the node, its op type and the file.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"

namespace mt {

class OnnxNode {
 public:
  OnnxNode(const onnx::NodeProto& node, int index, const std::string& origin);

  const onnx::NodeProto& proto() const { return node_; }
  const std::string& op() const { return node_.op_type(); }
  int index() const { return index_; }
  // "Conv node 'conv1' (#3)", for messages.
  std::string Label() const;
  // Throws OnnxError: "<file>: <label>: <message>".
  [[noreturn]] void Fail(const std::string& message) const;

  // Input i's tensor name, "" when absent (ONNX leaves optional ones empty).
  std::string Input(int i) const;
  int InputCount() const { return node_.input_size(); }
  // Fails unless the node has [min, max] inputs and one used output.
  void ExpectArity(int min_inputs, int max_inputs) const;

  // Fails on any attribute not in `known`: an attribute we ignore could
  // change what the op computes.
  void OnlyAttributes(const std::vector<std::string>& known) const;
  bool Has(const char* name) const { return Find(name) != nullptr; }
  int64_t Int(const char* name, int64_t fallback) const;
  float Float(const char* name, float fallback) const;
  std::string String(const char* name, const std::string& fallback) const;
  std::vector<int64_t> Ints(const char* name) const;  // empty when absent
  const onnx::TensorProto* Tensor(const char* name) const;

 private:
  const onnx::AttributeProto* Find(const char* name) const;
  const onnx::AttributeProto& Typed(const char* name, onnx::AttributeProto::AttributeType t) const;

  const onnx::NodeProto& node_;
  int index_;
  const std::string& origin_;
};

}  // namespace mt
