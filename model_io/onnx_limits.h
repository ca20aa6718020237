// What one ONNX import may cost, checked before the memory is taken: a file
// is a stranger's (mtmodel, mthub --model), and a few kilobytes of graph can
// ask for gigabytes (16-way Concats of Concats, one constant copied by
// thousands of nodes, a million layers). The defaults sit far above any
// model meant for a phone (MobileNetV2: 3.5M parameters, a few hundred
// nodes; ResNet-50: 25M, about a thousand) and bound an import to a few GB.
#pragma once

#include <cstdint>

#include "core/layers/size_limits.h"

namespace mt {

struct OnnxImportLimits {
  // The file as read; protobuf parses up to 2 GiB.
  int64_t max_file_bytes = int64_t{1} << 30;
  // The parsed file's messages, bounded from its bytes before the parse
  // (onnx_wire_scan.h): some encodings grow tenfold in memory.
  int64_t max_parsed_bytes = int64_t{3} << 29;
  // Nodes of the graph, counted in the file's bytes before they are parsed,
  // and inputs of one node (Concat and Sum take up to 64 in mt).
  int64_t max_nodes = int64_t{1} << 16;
  int max_node_inputs = 64;
  // Every constant the import holds at once, decoded (4 bytes a float,
  // 8 an integer): initializers, Constant nodes and the shape arithmetic.
  int64_t max_constant_bytes = int64_t{1} << 29;
  // The layers' weights and batch norm's running statistics, each as the
  // model takes them (core/layers/size_limits.h).
  int64_t max_params = kMaxModelParams;
  int64_t max_running_stats = kMaxModelParams;
};

}  // namespace mt
