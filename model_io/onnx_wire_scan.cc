#include "model_io/onnx_wire_scan.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include "onnx/onnx_pb.h"

namespace mt {
namespace {

using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;

// Calls `inside` on each length-delimited occurrence of `field` in the
// message that fills `in` up to its limit, skipping every other field.
// False on bytes that are not protobuf.
template <typename Inside>
bool EachOccurrence(CodedInputStream& in, int field, Inside inside) {
  while (const uint32_t tag = in.ReadTag()) {
    const bool wanted =
        WireFormatLite::GetTagFieldNumber(tag) == field &&
        WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
    if (!wanted) {
      if (!WireFormatLite::SkipField(&in, tag)) return false;
      continue;
    }
    uint32_t length = 0;
    if (!in.ReadVarint32(&length)) return false;
    const CodedInputStream::Limit limit = in.PushLimit(static_cast<int>(length));
    if (!inside(in) || in.BytesUntilLimit() > 0) return false;
    in.PopLimit(limit);
  }
  return in.ConsumedEntireMessage();
}

}  // namespace

int64_t CountOnnxGraphNodes(const std::string& bytes) {
  CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                      static_cast<int>(bytes.size()));
  int64_t nodes = 0;
  const bool readable =
      EachOccurrence(in, onnx::ModelProto::kGraphFieldNumber, [&](CodedInputStream& graph) {
        return EachOccurrence(graph, onnx::GraphProto::kNodeFieldNumber,
                              [&](CodedInputStream& node) {
                                ++nodes;
                                return node.Skip(node.BytesUntilLimit());
                              });
      });
  return readable ? nodes : -1;
}

}  // namespace mt
