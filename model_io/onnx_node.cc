#include "model_io/onnx_node.h"

#include <cmath>
#include <cstring>

#include "model_io/onnx_error.h"

namespace mt {

OnnxNode::OnnxNode(const onnx::NodeProto& node, int index, const std::string& origin)
    : node_(node), index_(index), origin_(origin) {}

std::string OnnxNode::Label() const {
  return node_.op_type() + " node '" + node_.name() + "' (#" + std::to_string(index_) + ")";
}

void OnnxNode::Fail(const std::string& message) const {
  throw OnnxError(origin_ + ": " + Label() + ": " + message);
}

std::string OnnxNode::Input(int i) const { return i < node_.input_size() ? node_.input(i) : ""; }

void OnnxNode::ExpectArity(int min_inputs, int max_inputs) const {
  if (node_.input_size() < min_inputs || node_.input_size() > max_inputs)
    Fail("has " + std::to_string(node_.input_size()) + " inputs, expected " +
         std::to_string(min_inputs) +
         (max_inputs != min_inputs ? " to " + std::to_string(max_inputs) : ""));
  if (node_.output_size() < 1 || node_.output(0).empty()) Fail("has no output");
  for (int i = 1; i < node_.output_size(); ++i)
    if (!node_.output(i).empty())
      Fail("its output #" + std::to_string(i) + " (" + node_.output(i) +
           ") is used; only the first output of this op is supported");
}

void OnnxNode::OnlyAttributes(const std::vector<std::string>& known) const {
  for (const onnx::AttributeProto& a : node_.attribute()) {
    bool ok = false;
    for (const std::string& k : known) ok = ok || a.name() == k;
    if (!ok) {
      std::string list;
      for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
      Fail("attribute '" + a.name() +
           "' is not supported (supported: " + (list.empty() ? "none" : list) + ")");
    }
  }
}

const onnx::AttributeProto* OnnxNode::Find(const char* name) const {
  for (const onnx::AttributeProto& a : node_.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

const onnx::AttributeProto& OnnxNode::Typed(const char* name,
                                            onnx::AttributeProto::AttributeType t) const {
  const onnx::AttributeProto* a = Find(name);
  // Old writers leave the type unset; trust the field then.
  if (a->type() != onnx::AttributeProto::UNDEFINED && a->type() != t)
    Fail(std::string("attribute '") + name + "' has type " +
         onnx::AttributeProto::AttributeType_Name(a->type()) + ", expected " +
         onnx::AttributeProto::AttributeType_Name(t));
  return *a;
}

int64_t OnnxNode::Int(const char* name, int64_t fallback) const {
  return Has(name) ? Typed(name, onnx::AttributeProto::INT).i() : fallback;
}

float OnnxNode::Float(const char* name, float fallback) const {
  if (!Has(name)) return fallback;
  const float v = Typed(name, onnx::AttributeProto::FLOAT).f();
  // No op mt reads takes a NaN or infinite epsilon, slope or constant.
  if (!std::isfinite(v)) Fail(std::string("attribute '") + name + "' is not finite");
  return v;
}

std::string OnnxNode::String(const char* name, const std::string& fallback) const {
  return Has(name) ? Typed(name, onnx::AttributeProto::STRING).s() : fallback;
}

std::vector<int64_t> OnnxNode::Ints(const char* name) const {
  if (!Has(name)) return {};
  const auto& a = Typed(name, onnx::AttributeProto::INTS);
  return {a.ints().begin(), a.ints().end()};
}

const onnx::TensorProto* OnnxNode::Tensor(const char* name) const {
  return Has(name) ? &Typed(name, onnx::AttributeProto::TENSOR).t() : nullptr;
}

}  // namespace mt
