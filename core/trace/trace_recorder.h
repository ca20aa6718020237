// A process's spans in a buffer allocated once: recording copies a span in
// under a short lock and never allocates. When the buffer is full it keeps
// the first spans and counts the rest, which the trace file's metadata
// reports (a bounded trace of a run's start beats an unbounded one).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "core/trace/span.h"

namespace mt::trace {

class TraceRecorder final : public SpanSink {
 public:
  // 262144 spans, 8 MiB: about 8000 LeNet-5 steps of a worker.
  static constexpr size_t kDefaultCapacity = size_t{1} << 18;

  // `default_track`: where spans recorded off any ScopedTrack go.
  explicit TraceRecorder(size_t capacity = kDefaultCapacity, int32_t default_track = 0);

  void Add(const Span& span) override;

  // A copy of the spans kept, in the order they were recorded.
  std::vector<Span> Spans() const;
  size_t size() const;
  size_t capacity() const { return capacity_; }
  // Spans that found the buffer full.
  int64_t dropped() const;

 private:
  const size_t capacity_;
  const int32_t default_track_;
  mutable std::mutex mu_;
  std::vector<Span> spans_;  // reserved to capacity_: push_back never reallocates
  int64_t dropped_ = 0;
};

}  // namespace mt::trace
