#include "model_io/onnx_wire_scan.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/message.h>
#include <google/protobuf/wire_format_lite.h>

#include "onnx/onnx_pb.h"

namespace mt {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::MessageFactory;
using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;

constexpr int kMaxDepth = 100;  // protobuf's own recursion limit
// A heap string or message costs its object and the allocator's header.
constexpr int64_t kStringObject = 32 + 16, kPointer = 8, kHeapHeader = 16;

int64_t ValueWidth(const FieldDescriptor& f) {
  switch (f.cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
    case FieldDescriptor::CPPTYPE_UINT32:
    case FieldDescriptor::CPPTYPE_FLOAT:
    case FieldDescriptor::CPPTYPE_ENUM: return 4;
    case FieldDescriptor::CPPTYPE_BOOL: return 1;
    default: return 8;
  }
}

bool FixedWidth(const FieldDescriptor& f) {
  switch (f.type()) {
    case FieldDescriptor::TYPE_FLOAT:
    case FieldDescriptor::TYPE_DOUBLE:
    case FieldDescriptor::TYPE_FIXED32:
    case FieldDescriptor::TYPE_FIXED64:
    case FieldDescriptor::TYPE_SFIXED32:
    case FieldDescriptor::TYPE_SFIXED64: return true;
    default: return false;
  }
}

class Scanner {
 public:
  explicit Scanner(OnnxWireScan& scan) : scan_(scan) {}

  // The message of type `type` that fills `in` up to its limit.
  bool Message(CodedInputStream& in, const Descriptor& type, int depth) {
    if (depth > kMaxDepth) return false;
    while (const uint32_t tag = in.ReadTag()) {
      const FieldDescriptor* f = type.FindFieldByNumber(WireFormatLite::GetTagFieldNumber(tag));
      const bool delimited =
          WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
      if (!f || !delimited) {
        // A scalar, or a field this build does not know, which protobuf
        // keeps as bytes: either way no more than this.
        const int before = in.CurrentPosition();
        if (!WireFormatLite::SkipField(&in, tag)) return false;
        scan_.parsed_bytes += kStringObject + kPointer + (in.CurrentPosition() - before);
        continue;
      }
      uint32_t length = 0;
      if (!in.ReadVarint32(&length)) return false;
      if (f->type() == FieldDescriptor::TYPE_MESSAGE) {
        if (&type == onnx::GraphProto::descriptor() &&
            f->number() == onnx::GraphProto::kNodeFieldNumber)
          ++scan_.nodes;
        const Descriptor& inner = *f->message_type();
        scan_.parsed_bytes += kPointer + kHeapHeader + MessageObjectBytes(inner);
        const CodedInputStream::Limit limit = in.PushLimit(static_cast<int>(length));
        if (!Message(in, inner, depth + 1) || in.BytesUntilLimit() > 0) return false;
        in.PopLimit(limit);
        continue;
      }
      if (f->cpp_type() == FieldDescriptor::CPPTYPE_STRING)
        scan_.parsed_bytes += kPointer + kStringObject + length;
      else  // packed: fixed-width values take what they took on the wire, varints up to 8x
        scan_.parsed_bytes += FixedWidth(*f) ? int64_t{length} : int64_t{length} * ValueWidth(*f);
      if (!in.Skip(static_cast<int>(length))) return false;
    }
    return in.ConsumedEntireMessage();
  }

 private:
  static int64_t MessageObjectBytes(const Descriptor& type) {
    const google::protobuf::Message* prototype =
        MessageFactory::generated_factory()->GetPrototype(&type);
    return prototype ? static_cast<int64_t>(prototype->SpaceUsedLong()) : 256;
  }

  OnnxWireScan& scan_;
};

}  // namespace

OnnxWireScan ScanOnnxWire(const std::string& bytes) {
  OnnxWireScan scan;
  CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                      static_cast<int>(bytes.size()));
  scan.parsed_bytes = static_cast<int64_t>(onnx::ModelProto::default_instance().SpaceUsedLong());
  scan.readable = Scanner(scan).Message(in, *onnx::ModelProto::descriptor(), 0);
  return scan;
}

}  // namespace mt
