// ONNX tensors to and from host vectors: what the importer reads from
// initializers and Constant nodes, what the exporter writes as initializers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"

namespace mt {

// A constant of the graph, decoded.
struct OnnxConstant {
  std::vector<int64_t> dims;
  std::vector<float> floats;  // for FLOAT (and DOUBLE, narrowed) tensors
  std::vector<int64_t> ints;  // for INT64, INT32 and BOOL tensors
  bool is_float = false;

  size_t count() const { return is_float ? floats.size() : ints.size(); }
};

// Throws OnnxError naming `what` (e.g. "initializer conv1.weight") for a
// tensor stored outside the file, of a type we do not read, whose data
// does not match its dims (a corrupt file), or a float that is NaN or
// infinite (weights that could only make the model's outputs NaN).
OnnxConstant DecodeTensor(const onnx::TensorProto& t, const std::string& what);
// How many values the tensor's dims promise, from the dims alone (no
// data is read): what DecodeTensor will allocate. Throws OnnxError as
// DecodeTensor for a negative dimension or a product past 2^31.
int64_t TensorElements(const onnx::TensorProto& t, const std::string& what);
// The bytes each of its values takes decoded: 4 as a float, 8 as an int64.
int DecodedElementBytes(const onnx::TensorProto& t);

// A FLOAT initializer named `name`, data as little-endian raw bytes.
onnx::TensorProto FloatTensor(const std::string& name, const std::vector<int64_t>& dims,
                              const float* data);
// "[64, 3, 3, 3]", for messages.
std::string DimsText(const std::vector<int64_t>& dims);

}  // namespace mt
