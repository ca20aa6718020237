#include "core/trace/layer_spans.h"

namespace mt::trace {
namespace {

void AddTimed(SpanSink& sink, SpanKind kind, LayerTimes::Clock::time_point begin, double seconds,
              int32_t index, int64_t step) {
  const int64_t b = ToMicros(begin);
  sink.Add(MakeSpan(kind, b, b + static_cast<int64_t>(seconds * 1e6), index, step));
}

}  // namespace

void RecordLayerSpans(const LayerTimes& t, SpanSink& sink, int64_t step) {
  const LayerTimes::Clock::time_point never{};
  for (size_t i = 0; i < t.forward_begin.size() && i < t.forward.size(); ++i)
    AddTimed(sink, SpanKind::kForward, t.forward_begin[i], t.forward[i], static_cast<int32_t>(i),
             step);
  if (t.loss_begin != never) AddTimed(sink, SpanKind::kLoss, t.loss_begin, t.loss, -1, step);
  // Backward runs last layer first; a layer below the lowest trained one
  // runs none (its begin is never set).
  for (size_t i = t.backward_begin.size(); i-- > 0;)
    if (i < t.backward.size() && t.backward_begin[i] != never)
      AddTimed(sink, SpanKind::kBackward, t.backward_begin[i], t.backward[i],
               static_cast<int32_t>(i), step);
}

}  // namespace mt::trace
