// A look at an ONNX file's bytes before protobuf parses them: parsing
// builds every message at once, and small wire encodings grow in memory (a
// 35 MB file of a million layers took 1.5 GB to hold; a one-character
// input name takes 3 bytes on the wire and some 40 parsed). The scan walks
// the wire format with ModelProto's descriptor, allocating nothing.
#pragma once

#include <cstdint>
#include <string>

namespace mt {

struct OnnxWireScan {
  bool readable = false;  // false: no protobuf of ModelProto's shape, as the parse will say
  int64_t nodes = 0;      // of the graph (summed over its occurrences, as protobuf merges them)
  // An upper bound on what the parsed ModelProto holds in memory: each
  // message's object, each string's, each repeated value at its width.
  int64_t parsed_bytes = 0;
};

OnnxWireScan ScanOnnxWire(const std::string& bytes);

}  // namespace mt
