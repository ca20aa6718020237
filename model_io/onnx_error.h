#pragma once

#include <stdexcept>

namespace mt {

// An ONNX file this build cannot read or write as an mt model; the message
// names the file and, where one is at fault, the node and its op type.
struct OnnxError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace mt
