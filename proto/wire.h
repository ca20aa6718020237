// How float vectors travel: as packed float fields of chunk messages, at
// most kChunkFloats per message so no message nears gRPC's 4 MiB default
// receive limit, whatever the model size.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include <google/protobuf/repeated_field.h>

#include "hub.pb.h"

namespace mt::wire {

// 2: compressed gradients, memory budgets and LeftOut.
// 3: one schema: enums and optional fields instead of strings and -1,
//    optimizer state as a message, dead fields removed.
// 4: rounds of local steps (Assignment.local_steps, stride).
// 5: a state leaves out the optimizer's slots while it has never stepped.
constexpr uint32_t kProtocolVersion = 5;
constexpr uint32_t kChunkFloats = 256 * 1024;  // 1 MiB of payload
// Receive limit set on both sides: a chunk plus generous room for headers.
constexpr int kMaxMessageBytes = 8 * 1024 * 1024;

// Transport settings both sides apply: large HTTP/2 frames and a receive
// window that holds a whole chunk, so a 1 MiB message goes out in a few
// writes instead of waiting on 64 KiB window updates.
constexpr int kHttp2FrameBytes = 1 << 20;
constexpr int kHttp2WindowBytes = 4 << 20;

inline size_t ChunkCount(size_t floats) {
  return floats == 0 ? 1 : (floats + kChunkFloats - 1) / kChunkFloats;
}

// Where chunk c of a sequence of `total` floats lies: every chunk but the
// last is full, so a chunk's length follows from its index.
struct ChunkRange {
  size_t begin = 0, size = 0;
};
inline ChunkRange Chunk(size_t c, size_t total) {
  const size_t begin = c * kChunkFloats;
  return {begin, begin >= total ? 0 : std::min<size_t>(kChunkFloats, total - begin)};
}

// Fills a chunk's packed float field without zero-filling it first.
inline void PackFloats(const float* src, size_t n, google::protobuf::RepeatedField<float>* out) {
  out->Clear();
  out->Add(src, src + n);
}

// mtworker --device names and their wire enum.
inline proto::ComputeDevice DeviceFromName(const std::string& name) {
  if (name == "cpu") return proto::DEVICE_CPU;
  if (name == "opencl") return proto::DEVICE_OPENCL;
  if (name == "auto") return proto::DEVICE_AUTO;
  return proto::DEVICE_UNSPECIFIED;
}
inline const char* DeviceName(proto::ComputeDevice d) {
  switch (d) {
    case proto::DEVICE_OPENCL: return "opencl";
    case proto::DEVICE_AUTO: return "auto";
    default: return "cpu";
  }
}

}  // namespace mt::wire
