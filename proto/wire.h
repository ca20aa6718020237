// How float vectors travel: as packed float fields of chunk messages, at
// most kChunkFloats per message so no message nears gRPC's 4 MiB default
// receive limit, whatever the model size.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <google/protobuf/repeated_field.h>

#include "hub.pb.h"
#include "proto/protocol_version.h"

namespace mt::wire {

// The most spans a worker sends with one gradient (GradientChunk.trace).
constexpr int kMaxTraceSpans = 512;
constexpr uint32_t kChunkFloats = 256 * 1024;  // 1 MiB of payload
// Receive limit set on both sides: a chunk plus generous room for headers.
constexpr int kMaxMessageBytes = 8 * 1024 * 1024;

// Transport settings both sides apply: large HTTP/2 frames and a receive
// window that holds a whole chunk, so a 1 MiB message goes out in a few
// writes instead of waiting on 64 KiB window updates.
constexpr int kHttp2FrameBytes = 1 << 20;
// The most local steps one assignment may ask for (the hub's own bound,
// --sync-every, is 64) and the largest sample position or stride it may
// name: a worker refuses a plan beyond them before computing anything, so
// a hostile hub cannot make it loop for days or overflow its arithmetic.
constexpr int kMaxLocalSteps = 1024;
constexpr int64_t kMaxSamplePosition = int64_t{1} << 40;
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

// A gradient segment: floats [begin, end) of the parameter vector, layer
// aligned where it can be, at most kChunkFloats.
struct Segment {
  size_t begin = 0, end = 0;
  size_t size() const { return end - begin; }
};

// Smallest segment worth a message of its own (64 KiB): smaller layers
// travel together, so a step costs a few messages, not one per layer.
constexpr size_t kMinSegmentFloats = 16 * 1024;

// How a gradient of `total` floats travels: in the order backpropagation
// finishes it, last layer first, so each segment can leave while the layers
// below it are still computing. `layer_begins` are the layers' first
// parameters, ascending. The segments are contiguous and descending: the
// first ends at `total`, each ends where the one before began, the last
// begins at `first` (it also carries the step's report). Parameters below
// `first` (frozen layers under the lowest trained one) never travel.
inline std::vector<Segment> GradientSegments(const std::vector<size_t>& layer_begins, size_t total,
                                             size_t first = 0) {
  std::vector<Segment> out;
  size_t end = total;
  auto close = [&](size_t begin) {
    // Split from the top so every piece keeps the descending order.
    while (end - begin > kChunkFloats) {
      out.push_back({end - kChunkFloats, end});
      end -= kChunkFloats;
    }
    if (end > begin || out.empty()) out.push_back({begin, end});
    end = begin;
  };
  for (auto it = layer_begins.rbegin(); it != layer_begins.rend(); ++it)
    if (*it > first && *it < end && end - *it >= kMinSegmentFloats) close(*it);
  if (end > first || out.empty()) close(first);
  return out;
}

// The segments named by their first floats in travel order (as JoinReply
// carries them), or an empty vector when they do not tile [first, total) in
// descending order with at most kChunkFloats each.
inline std::vector<Segment> SegmentsFromBegins(const std::vector<uint64_t>& begins, size_t total,
                                               size_t first = 0) {
  if (total == first)
    return begins.size() == 1 && begins[0] == first ? std::vector<Segment>{{first, first}}
                                                    : std::vector<Segment>{};
  std::vector<Segment> out;
  size_t end = total;
  for (uint64_t b : begins) {
    if (end == first || b >= end || b < first || end - b > kChunkFloats) return {};
    out.push_back({static_cast<size_t>(b), end});
    end = static_cast<size_t>(b);
  }
  if (end != first) return {};
  return out;
}

// Fills a chunk's packed float field without zero-filling it first.
inline void PackFloats(const float* src, size_t n, google::protobuf::RepeatedField<float>* out) {
  out->Clear();
  out->Add(src, src + n);
}

// The name of a worker's --device on the wire, for logs and reports.
inline const char* DeviceName(proto::ComputeDevice d) {
  switch (d) {
    case proto::DEVICE_OPENCL: return "opencl";
    case proto::DEVICE_AUTO: return "auto";
    default: return "cpu";
  }
}

}  // namespace mt::wire
