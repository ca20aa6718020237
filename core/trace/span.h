// Timeline spans (mthub/mtworker --trace): what one thread did from when to
// when, on the process's steady clock in microseconds. Spans are small
// fixed-size records, so recording one copies 32 bytes into a buffer
// allocated up front; a null sink is tracing off and costs one check.
// Written as Chrome trace events by core/trace/chrome_trace.h.
#pragma once

#include <chrono>
#include <cstdint>

namespace mt::trace {

// What a span is. The values travel on the wire (proto TraceSpans.kind):
// append, never renumber.
enum class SpanKind : uint8_t {
  // Worker (and standalone).
  kStep = 0,    // one planned step: compute, encode and send
  kForward,     // a layer's forward pass (index: the layer)
  kBackward,    // a layer's backward pass (index: the layer)
  kLoss,        // softmax cross-entropy
  kOptimizer,   // the optimizer's step (the hub's on its master copy too)
  kEncode,      // packing or compressing a gradient segment (index: the segment)
  kSend,        // handing a segment to the transport (index: the segment)
  kWaitResult,  // from the gradient leaving to the hub's answer arriving
  kLocalStep,   // local SGD: one of a round's steps (index: its number)
  kApplyState,  // taking the hub's full state
  // Hub.
  kReceive,      // one worker's gradient, first chunk to last (index: worker id)
  kBarrierWait,  // the run thread waiting for the step's gradients
  kReduce,       // averaging a segment (index: the segment)
  kBroadcast,    // plans and results (or full states) going out
  kEvaluation,   // the master weights on the test set
  kCheckpoint,
  kRecalibration,  // batch norm statistics recomputed
  kCount,
};

const char* SpanName(SpanKind kind);      // "forward", "barrier wait"...
const char* SpanCategory(SpanKind kind);  // "compute", "wire", "sync", "io"

// Threads as rows of a process's timeline. A thread records on its current
// track (ScopedTrack), else on the sink's default.
constexpr int32_t kTrackDefault = -1;
constexpr int32_t kTrackCompute = 0;         // worker: the thread that trains
constexpr int32_t kTrackLookahead = 1;       // worker: steps ahead (--overlap)
constexpr int32_t kTrackRun = 0;             // hub: the run thread
constexpr int32_t kTrackStep = 1;            // hub: step work on the transport's threads
constexpr int32_t kTrackReceiveBase = 1000;  // hub: + worker id, that worker's gradients

struct Span {
  int64_t begin_us = 0;
  int32_t dur_us = 0;
  int32_t index = -1;  // what the kind says (a layer, a worker, a segment); -1 none
  int64_t step = -1;   // -1 not known
  int32_t track = kTrackDefault;
  SpanKind kind = SpanKind::kStep;
};

using Clock = std::chrono::steady_clock;
inline int64_t ToMicros(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}
inline int64_t NowMicros() { return ToMicros(Clock::now()); }

// The current thread's track while a ScopedTrack lives, else kTrackDefault.
int32_t CurrentTrack();
class ScopedTrack {
 public:
  explicit ScopedTrack(int32_t track);
  ~ScopedTrack();
  ScopedTrack(const ScopedTrack&) = delete;
  ScopedTrack& operator=(const ScopedTrack&) = delete;

 private:
  int32_t previous_;
};

// Where spans go. Add must be thread-safe, must not allocate and must not
// throw; a span whose track is kTrackDefault takes the thread's current one.
class SpanSink {
 public:
  virtual ~SpanSink() = default;
  virtual void Add(const Span& span) = 0;
};

// A span from begin to end (microseconds), clamped to what a Span holds.
Span MakeSpan(SpanKind kind, int64_t begin_us, int64_t end_us, int32_t index = -1,
              int64_t step = -1);

// Records a span from construction to destruction into `sink`; nothing at
// all when `sink` is null.
class ScopedSpan {
 public:
  ScopedSpan(SpanSink* sink, SpanKind kind, int32_t index = -1, int64_t step = -1)
      : sink_(sink), kind_(kind), index_(index), step_(step), begin_(sink ? NowMicros() : 0) {}
  ~ScopedSpan() {
    if (sink_) sink_->Add(MakeSpan(kind_, begin_, NowMicros(), index_, step_));
  }
  ScopedSpan(const ScopedSpan&) = delete;
  ScopedSpan& operator=(const ScopedSpan&) = delete;

 private:
  SpanSink* sink_;
  SpanKind kind_;
  int32_t index_;
  int64_t step_;
  int64_t begin_;
};

}  // namespace mt::trace
