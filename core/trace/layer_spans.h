// A profiled pass (Model::ComputeGradients with LayerTimes) as spans: each
// layer's forward and backward and the loss, where they began and how long
// they took.
#pragma once

#include <cstdint>

#include "core/model/model.h"
#include "core/trace/span.h"

namespace mt::trace {

// Adds the pass's spans to `sink` (index: the layer), without allocating.
void RecordLayerSpans(const LayerTimes& times, SpanSink& sink, int64_t step = -1);

}  // namespace mt::trace
