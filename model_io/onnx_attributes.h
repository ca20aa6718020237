// Reading the attributes and operands that several ONNX ops share (windows,
// strides, padding, scalar bounds), failing on what mt cannot do.
#pragma once

#include <string>

#include "model_io/onnx_node.h"
#include "model_io/onnx_tensors.h"

namespace mt {

float ScalarOf(const OnnxNode& n, const OnnxConstant& c, const std::string& role);
// Two equal values from an ONNX list of per-axis values, `fallback` when absent.
int SquareAttr(const OnnxNode& n, const char* name, int fallback);
void CheckDilations(const OnnxNode& n);
// pads [top, left, bottom, right] all equal (or auto_pad VALID): one padding.
int SymmetricPadding(const OnnxNode& n);

}  // namespace mt
