#include "core/trace/span.h"

#include <algorithm>
#include <limits>

namespace mt::trace {
namespace {

thread_local int32_t current_track = kTrackDefault;

}  // namespace

const char* SpanName(SpanKind kind) {
  switch (kind) {
    case SpanKind::kStep: return "step";
    case SpanKind::kForward: return "forward";
    case SpanKind::kBackward: return "backward";
    case SpanKind::kLoss: return "loss";
    case SpanKind::kOptimizer: return "optimizer";
    case SpanKind::kEncode: return "encode";
    case SpanKind::kSend: return "send";
    case SpanKind::kWaitResult: return "wait for result";
    case SpanKind::kLocalStep: return "local step";
    case SpanKind::kApplyState: return "apply state";
    case SpanKind::kReceive: return "receive";
    case SpanKind::kBarrierWait: return "barrier wait";
    case SpanKind::kReduce: return "reduce";
    case SpanKind::kBroadcast: return "broadcast";
    case SpanKind::kEvaluation: return "evaluation";
    case SpanKind::kCheckpoint: return "checkpoint";
    case SpanKind::kRecalibration: return "recalibration";
    case SpanKind::kCount: break;
  }
  return "?";
}

const char* SpanCategory(SpanKind kind) {
  switch (kind) {
    case SpanKind::kEncode:
    case SpanKind::kSend:
    case SpanKind::kWaitResult:
    case SpanKind::kApplyState:
    case SpanKind::kReceive:
    case SpanKind::kBroadcast: return "wire";
    case SpanKind::kBarrierWait:
    case SpanKind::kReduce: return "sync";
    case SpanKind::kCheckpoint: return "io";
    default: return "compute";
  }
}

int32_t CurrentTrack() { return current_track; }

ScopedTrack::ScopedTrack(int32_t track) : previous_(current_track) { current_track = track; }
ScopedTrack::~ScopedTrack() { current_track = previous_; }

Span MakeSpan(SpanKind kind, int64_t begin_us, int64_t end_us, int32_t index, int64_t step) {
  Span s;
  s.kind = kind;
  s.begin_us = begin_us;
  // A span longer than 35 minutes is cut there; a clock that went backwards
  // (it cannot: steady) would give an empty one rather than a negative one.
  s.dur_us = static_cast<int32_t>(
      std::clamp<int64_t>(end_us - begin_us, 0, std::numeric_limits<int32_t>::max()));
  s.index = index;
  s.step = step;
  return s;
}

}  // namespace mt::trace
