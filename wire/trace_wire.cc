#include "wire/trace_wire.h"

#include <algorithm>
#include <limits>

namespace mt::trace {
namespace {

// Rows a worker may use (kTrackCompute, kTrackLookahead and room to grow),
// and bounds that keep every sum the hub makes far from overflowing.
constexpr uint32_t kMaxTracks = 16;
constexpr int64_t kMaxTimeUs = int64_t{1} << 60;
constexpr int64_t kMaxDeltaUs = int64_t{1} << 40;  // 12 days
constexpr int32_t kMaxIndex = 1 << 24;
constexpr int32_t kMaxStepDelta = 1 << 20;

}  // namespace

void EncodeSpans(const Span* spans, size_t n, int64_t dropped, const BatchStamps& stamps,
                 int64_t step, proto::TraceSpans* out) {
  out->Clear();
  out->set_plan_hub_time_us(stamps.plan_hub_time_us);
  out->set_plan_received_us(stamps.plan_received_us);
  out->set_sent_us(stamps.sent_us);
  out->set_dropped(
      static_cast<uint32_t>(std::min<int64_t>(dropped, std::numeric_limits<uint32_t>::max())));
  int64_t previous = stamps.sent_us;
  for (size_t i = 0; i < n; ++i) {
    const Span& s = spans[i];
    out->add_kind(static_cast<uint32_t>(s.kind));
    out->add_index(s.index);
    out->add_begin_delta_us(s.begin_us - previous);
    out->add_duration_us(static_cast<uint32_t>(std::max<int32_t>(s.dur_us, 0)));
    out->add_track(static_cast<uint32_t>(std::max<int32_t>(s.track, 0)));
    // A span of no known step counts as the chunk's.
    const int64_t delta = s.step < 0 ? 0 : s.step - step;
    out->add_step_delta(
        static_cast<int32_t>(std::clamp<int64_t>(delta, -kMaxStepDelta, kMaxStepDelta)));
    previous = s.begin_us;
  }
}

std::string CheckSpans(const proto::TraceSpans& b, size_t max_spans) {
  const int n = b.kind_size();
  if (b.index_size() != n || b.begin_delta_us_size() != n || b.duration_us_size() != n ||
      b.track_size() != n || b.step_delta_size() != n)
    return "trace spans with columns of different lengths";
  if (static_cast<size_t>(n) > max_spans)
    return "trace of " + std::to_string(n) + " spans (at most " + std::to_string(max_spans) + ")";
  for (int64_t t : {b.plan_hub_time_us(), b.plan_received_us(), b.sent_us()})
    if (t < 0 || t > kMaxTimeUs) return "trace with a time out of range";
  for (int i = 0; i < n; ++i) {
    if (b.kind(i) >= static_cast<uint32_t>(SpanKind::kCount))
      return "trace span of unknown kind " + std::to_string(b.kind(i));
    if (b.track(i) >= kMaxTracks) return "trace span on track " + std::to_string(b.track(i));
    if (b.index(i) < -1 || b.index(i) > kMaxIndex)
      return "trace span with index " + std::to_string(b.index(i));
    if (b.duration_us(i) > static_cast<uint32_t>(std::numeric_limits<int32_t>::max()))
      return "trace span of " + std::to_string(b.duration_us(i)) + " us";
    if (b.begin_delta_us(i) < -kMaxDeltaUs || b.begin_delta_us(i) > kMaxDeltaUs)
      return "trace span beginning out of range";
    if (b.step_delta(i) < -kMaxStepDelta || b.step_delta(i) > kMaxStepDelta)
      return "trace span of step " + std::to_string(b.step_delta(i)) + " from its gradient's";
  }
  return "";
}

}  // namespace mt::trace
