#include "core/trace/trace_recorder.h"

namespace mt::trace {

TraceRecorder::TraceRecorder(size_t capacity, int32_t default_track)
    : capacity_(capacity), default_track_(default_track) {
  spans_.reserve(capacity_);
}

void TraceRecorder::Add(const Span& span) {
  std::lock_guard<std::mutex> lock(mu_);
  if (spans_.size() >= capacity_) {
    ++dropped_;
    return;
  }
  spans_.push_back(span);
  Span& kept = spans_.back();
  if (kept.track == kTrackDefault) {
    const int32_t current = CurrentTrack();
    kept.track = current == kTrackDefault ? default_track_ : current;
  }
}

std::vector<Span> TraceRecorder::Spans() const {
  std::lock_guard<std::mutex> lock(mu_);
  return spans_;
}

size_t TraceRecorder::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return spans_.size();
}

int64_t TraceRecorder::dropped() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dropped_;
}

}  // namespace mt::trace
