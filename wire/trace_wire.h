// A worker's spans on their way to the hub (proto TraceSpans, on the last
// chunk of each gradient): column by column as small varints, each begin
// as the difference from the one before, so a LeNet-5 step's ~30 spans
// take a few hundred bytes. The hub checks a batch before it trusts a
// number in it: a hostile worker gets no unbounded rows or arithmetic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/trace/clock_offset.h"
#include "core/trace/span.h"
#include "hub.pb.h"

namespace mt::trace {

// The clock stamps a batch carries (core/trace/clock_offset.h).
struct BatchStamps {
  int64_t plan_hub_time_us = 0;  // the answered plan's StepPlan.hub_time_us (0: none)
  int64_t plan_received_us = 0;  // when it arrived, on the worker's clock
  int64_t sent_us = 0;           // when the batch leaves, on the worker's clock
};

// Fills `out` with spans[0, n) (their tracks resolved) and `dropped`, for
// the chunk of `step`; clears what it held first, keeping the fields'
// capacity, so a steady step allocates nothing here.
void EncodeSpans(const Span* spans, size_t n, int64_t dropped, const BatchStamps& stamps,
                 int64_t step, proto::TraceSpans* out);

// "" when `batch` is one the hub can take (columns of one length, at most
// `max_spans`, known kinds, few tracks, bounded numbers), else why not.
std::string CheckSpans(const proto::TraceSpans& batch, size_t max_spans);

// The spans of a checked batch on the worker's clock; `step`: the chunk's.
template <class Fn>
void ForEachSpan(const proto::TraceSpans& batch, int64_t step, Fn&& fn) {
  int64_t begin = batch.sent_us();
  for (int i = 0; i < batch.kind_size(); ++i) {
    begin += batch.begin_delta_us(i);
    Span s;
    s.kind = static_cast<SpanKind>(batch.kind(i));
    s.index = batch.index(i);
    s.begin_us = begin;
    s.dur_us = static_cast<int32_t>(batch.duration_us(i));
    s.track = static_cast<int32_t>(batch.track(i));
    s.step = step + batch.step_delta(i);
    fn(s);
  }
}

// The round trip a batch closes, with `hub_receive_us` when it arrived.
inline ClockSample SampleOf(const proto::TraceSpans& batch, int64_t hub_receive_us) {
  return ClockSample{batch.plan_hub_time_us(), batch.plan_received_us(), batch.sent_us(),
                     hub_receive_us};
}

}  // namespace mt::trace
