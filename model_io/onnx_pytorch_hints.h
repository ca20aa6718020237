// What a refused ONNX graph was in PyTorch, and what to do instead: the
// exporter writes some common constructs as ops mt has no layer for, and a
// list of op names ("Div", "Erf") does not tell a user that the trouble is
// their nn.GELU. Each hint names the construct and a fix.
#pragma once

#include <string>

#include "onnx/onnx_pb.h"

namespace mt {

// "\n<hint>" lines for the unsupported constructs `graph` holds; "" if none.
std::string PyTorchHints(const onnx::GraphProto& graph);

// The fix for a graph exported in training mode (batch norm that updates
// its running statistics, dropout that drops), for the translators' errors.
extern const char kExportInEvalMode[];

}  // namespace mt
