// A look at an ONNX file's bytes before protobuf parses them: parsing
// builds every node at once (a 35 MB file of a million layers took 1.5 GB
// to hold), so the node count is checked on the wire, where it costs
// nothing but a pass over the bytes.
#pragma once

#include <cstdint>
#include <string>

namespace mt {

// The nodes of the ModelProto's graph in `bytes` (its repeated field,
// summed over every occurrence of the graph, as protobuf merges them);
// -1 when the bytes are no readable protobuf, which the parse says better.
int64_t CountOnnxGraphNodes(const std::string& bytes);

}  // namespace mt
