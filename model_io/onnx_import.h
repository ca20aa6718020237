// ONNX models (opsets 11 to 17) as mt models: the spec and its weights.
// Supported: Conv, BatchNormalization (inference form), Relu, Clip(0, 6) and
// Clip(0, inf), MaxPool, AveragePool, GlobalAveragePool (+ Flatten), Add and
// Sum of graph tensors, Flatten (axis 1), Reshape to [N, features], Gemm,
// MatMul (+ Add of a bias), Dropout, Identity, an all-zero Pad and Constant
// operands. One
// FLOAT input [N, C, H, W], one output [N, classes]. Anything else is an
// OnnxError naming the node, its op type and what is supported.
#pragma once

#include <string>

#include "model_io/model_weights.h"
#include "model_io/onnx_error.h"

namespace mt {

LoadedModel ImportOnnx(const std::string& path);
// `origin` names the source in errors.
LoadedModel ImportOnnxBytes(const std::string& bytes, const std::string& origin);

}  // namespace mt
