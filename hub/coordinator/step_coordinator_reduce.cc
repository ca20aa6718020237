// The coordinator's side of the reduction: it hands the segment reducer
// (hub/round/segment_reducer.h) the contributions as they stand, and acts
// on its verdicts: the outer optimizer's step, the encoded segment sent
// back at once, or the refused worker dropped.
#include <algorithm>

#include "core/util/process_stats.h"
#include "hub/coordinator/step_coordinator.h"

namespace mt {

WorkerSlot* StepCoordinator::InputSlot(int i) const {
  return roster_.membership().Find(reducer_.inputs()[static_cast<size_t>(i)].id);
}

void StepCoordinator::ReduceReadySegments() {
  // A stopped step is never completed, and nothing follows a goodbye.
  if (stop_ || roster_.closed() || reducer_.step_refused()) return;
  // Masked updates are reduced once unmasked (UnmaskRound), not before.
  if (secure_ && secure_->in_round()) return;
  while (!reducer_.done()) {
    // Participants still in the step (in id order: round_ is), each of
    // which must have delivered the segment.
    reducer_.ClearInputs();
    for (auto* s : round_) {
      if (s->state != WorkerSlot::State::kActive) continue;
      if (s->inbox.segments_received() <= reducer_.reduced()) return;
      // Batch-weighted, or with a partition weighted by each share's size
      // (DataSettings::weight_by_share).
      const int64_t share = config_.data.weight_by_share ? messages_.ShareSamples(s->id) : 0;
      reducer_.AddInput({s->id, s->inbox.gradient().data(), share > 0 ? share : s->inbox.batch(),
                         s->inbox.segments_received(), s->session.lineage});
    }
    if (!reducer_.Ready()) return;
    if (ReduceSegment()) {
      reducer_.Commit();
      continue;
    }
    // A contribution was refused and its worker dropped: the segment is
    // reduced again without it, unless segments of the step went out.
    if (reducer_.Refused()) {
      cv_.notify_all();
      return;
    }
  }
}

bool StepCoordinator::ReduceSegment() {
  const size_t k = reducer_.reduced();
  const trace::ScopedSpan span(spans(), trace::SpanKind::kReduce, static_cast<int32_t>(k),
                               state_.step);
  const double cpu = ThreadCpuSeconds();
  SegmentReducer::Verdict verdict = reducer_.Combine(master_.average());
  metrics_.reduce_seconds += ThreadCpuSeconds() - cpu;
  if (!verdict.ok()) {
    roster_.Refuse(InputSlot(verdict.refused), verdict.why);
    cv_.notify_all();
    return false;
  }
  const size_t n = reducer_.inputs().size();
  for (size_t i = 0; i < n; ++i)
    InputSlot(static_cast<int>(i))->stats.clipped_segments += reducer_.clipped(i);
  verdict = reducer_.CheckAlignment();
  if (reducer_.last_segment())  // for the report and the live view
    for (size_t i = 0; i < n; ++i) {
      WorkerSlot* s = InputSlot(static_cast<int>(i));
      s->alignment = reducer_.alignment(s->id);
      s->stats.persistence_peak = reducer_.persistence_peak(s->id);
    }
  if (!verdict.ok()) {
    roster_.Refuse(InputSlot(verdict.refused), verdict.why);
    cv_.notify_all();
    return false;
  }
  const double cpu2 = ThreadCpuSeconds();
  if (dp_.enabled()) {
    // The noise joins before anything applies or sends the combination.
    int64_t total = 0, largest = 0;
    for (const Contribution& c : reducer_.inputs()) {
      total += c.batch;
      largest = std::max(largest, c.batch);
    }
    const SegmentRange& seg = reducer_.segment(k);
    dp_.OnCombined(master_.average() + seg.begin, seg.size(),
                   static_cast<double>(largest) / static_cast<double>(total), k == 0);
  }
  // The outer step overflows where the average did not when the velocity
  // holds huge changes: as a non-finite average (found by fuzzing, with
  // one worker sending FLT_MAX changes two rounds running).
  if (state_.local && (config_.local_sgd.outer_momentum > 0 || config_.local_sgd.outer_lr != 1) &&
      !master_.ApplyOuterOptimizer(k, static_cast<float>(config_.local_sgd.outer_lr),
                                   static_cast<float>(config_.local_sgd.outer_momentum))) {
    roster_.Refuse(InputSlot(reducer_.Largest()),
                   "the outer optimizer's step with its weight change is not finite (step " +
                       std::to_string(state_.step + 1) + ")");
    cv_.notify_all();
    return false;
  }
  master_.EncodeSegment(k, exchange_.compression.current());
  if (!reducer_.last_segment()) {
    // Sent now, while the workers still compute the segments below it.
    int64_t payload = 0;
    const Encoded chunk = messages_.Result(k, state_.step, state_.local ? state_.steps : 0,
                                           /*last=*/false, 0, &payload);
    for (size_t i = 0; i < n; ++i) {
      WorkerSlot* s = InputSlot(static_cast<int>(i));
      if (s->Send(chunk)) {
        metrics_.result_bytes_out += payload;
        s->stats.bytes_out += payload;
      }
    }
  }
  metrics_.reduce_seconds += ThreadCpuSeconds() - cpu2;
  return true;
}

}  // namespace mt
