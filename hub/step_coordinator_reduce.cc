// The step's reduction: segments averaged as they become ready and sent
// back, the tally of who finished, and what a round's times tell the
// deadline and --sync-every auto. Split from step_coordinator.cc by topic.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/util/process_stats.h"
#include "hub/quarantine.h"
#include "hub/step_coordinator.h"
#include "proto/wire.h"

namespace mt {
namespace {

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace

void StepCoordinator::ReduceReadySegments() {
  // A stopped step is never completed, and nothing follows a goodbye.
  if (stop_ || finished_ || step_refused_) return;
  const size_t total = master_.segments().size();
  while (reduced_segments_ < total) {
    // Participants still in the step (in id order: round_ is), each of
    // which must have delivered the segment.
    std::vector<WorkerSlot*>& from = reduce_from_;
    from.clear();
    for (auto* s : round_) {
      if (s->state != WorkerSlot::State::kActive) continue;
      if (s->inbox.segments_received() <= reduced_segments_) return;
      from.push_back(s);
    }
    if (from.empty()) return;
    if (ReduceSegment(reduced_segments_, from)) {
      ++reduced_segments_;
      continue;
    }
    // A contribution was refused and its worker dropped. Before anything
    // went out the segment is simply reduced again without it; after, the
    // workers hold segments of a step that will not be applied: it runs
    // again, everyone from the full state (CloseStep).
    if (reduced_segments_ > 0) {
      step_refused_ = true;
      cv_.notify_all();
      return;
    }
  }
}

bool StepCoordinator::ReduceSegment(size_t k, const std::vector<WorkerSlot*>& from) {
  const trace::ScopedSpan span(spans(), trace::SpanKind::kReduce, static_cast<int32_t>(k), step_);
  const double cpu = ThreadCpuSeconds();
  const wire::Segment seg = master_.segments()[k];
  // Batch weights: each inbox holds the mean over its batch, so
  // sum(b_i / B * g_i), B = sum(b_i), is the mean over all samples. Workers
  // come in id order, so the result does not depend on arrival order.
  int64_t samples = 0;
  for (auto* s : from) samples += s->inbox.batch();
  std::vector<const float*>& inputs = reduce_gradients_;
  std::vector<float>& weights = reduce_weights_;
  inputs.clear();
  weights.clear();
  for (auto* s : from) {
    inputs.push_back(s->inbox.gradient().data() + seg.begin);
    weights.push_back(static_cast<float>(s->inbox.batch()) / static_cast<float>(samples));
  }
  const RobustAggregator::Outcome o = aggregator_.Aggregate(
      inputs.data(), weights.data(), from.size(), seg.size(), master_.average() + seg.begin);
  metrics_.reduce_seconds += ThreadCpuSeconds() - cpu;
  if (o.refused >= 0) {
    char why[160];
    std::snprintf(why, sizeof why,
                  "its %s for step %lld is %.3g times the median norm of the step's (segment at "
                  "%zu; at most %.0f)",
                  round_local_ ? "weight change" : "gradient", static_cast<long long>(step_ + 1),
                  o.ratio, seg.begin, aggregator_.options().refuse_factor);
    Refuse(from[static_cast<size_t>(o.refused)], why);
    return false;
  }
  // Finite inputs whose combination is not: blame the largest.
  auto largest = [&] {
    size_t worst = 0;
    for (size_t i = 1; i < from.size(); ++i)
      if (aggregator_.norm(i) > aggregator_.norm(worst)) worst = i;
    return from[worst];
  };
  if (!o.finite) {
    Refuse(largest(), "the step's average with its contribution is not finite (step " +
                          std::to_string(step_ + 1) + ")");
    return false;
  }
  for (size_t i = 0; i < from.size(); ++i)
    from[i]->stats.clipped_segments += aggregator_.clipped(i);
  if (aggregator_.options().mode == Aggregation::kAuto && from.size() >= 3 &&
      !CheckAlignment(k, from))
    return false;
  const double cpu2 = ThreadCpuSeconds();
  // The outer step overflows where the average did not when the velocity
  // holds huge changes: as a non-finite average (found by fuzzing, with
  // one worker sending FLT_MAX changes two rounds running).
  if (round_local_ && (config_.outer_momentum > 0 || config_.outer_lr != 1) &&
      !master_.ApplyOuterOptimizer(k, static_cast<float>(config_.outer_lr),
                                   static_cast<float>(config_.outer_momentum))) {
    Refuse(largest(), "the outer optimizer's step with its weight change is not finite (step " +
                          std::to_string(step_ + 1) + ")");
    return false;
  }
  master_.EncodeSegment(k);
  if (k + 1 < master_.segments().size()) {
    // Sent now, while the workers still compute the segments below it.
    proto::HubMessage m;
    FillResult(k, step_, round_local_ ? round_steps_ : 0, m.mutable_result());
    const int64_t payload = ResultPayload(m.result());
    const Encoded chunk = encoder_.Encode(m);
    for (auto* s : from)
      if (s->Send(chunk)) {
        metrics_.result_bytes_out += payload;
        s->stats.bytes_out += payload;
      }
  }
  metrics_.reduce_seconds += ThreadCpuSeconds() - cpu2;
  return true;
}

bool StepCoordinator::CheckAlignment(size_t k, const std::vector<WorkerSlot*>& from) {
  for (size_t i = 0; i < from.size(); ++i) {
    const RobustAggregator::Alignment& a = aggregator_.alignment(i);
    from[i]->align_dot += a.dot;
    from[i]->align_self += a.self;
    from[i]->align_others += a.others;
  }
  if (k + 1 < master_.segments().size()) return true;
  // The step's whole contribution against the sum of the others': honest
  // workers on the same data agree a little (> 0) or, beside a hostile
  // one, not at all (~0); a sign flip disagrees with both honest ones.
  WorkerSlot* worst = nullptr;
  for (auto* s : from) {
    const double norms = std::sqrt(s->align_self * s->align_others);
    const double cosine = norms > 0 ? s->align_dot / norms : 0;
    s->alignment = s->alignment_steps == 0
                       ? cosine
                       : (1 - kAlignmentSmoothing) * s->alignment + kAlignmentSmoothing * cosine;
    ++s->alignment_steps;
    if (s->alignment_steps >= kAlignmentMinSteps && s->alignment < -kAlignmentBound &&
        (!worst || s->alignment < worst->alignment))
      worst = s;
  }
  if (!worst) return true;
  char why[200];
  std::snprintf(why, sizeof why,
                "its %ss point against the other workers' (mean cosine %.2f over its last ~%d "
                "steps; refused below -%.2f)",
                round_local_ ? "weight change" : "gradient", worst->alignment,
                static_cast<int>(1 / kAlignmentSmoothing), kAlignmentBound);
  Refuse(worst, why);
  return false;
}

void StepCoordinator::Refuse(WorkerSlot* s, const std::string& why) {
  spdlog::warn("worker {} ({}) refused and dropped: {}", s->id, s->name, why);
  Emit(HubEvent::Kind::kWorkerDropped, s->id, why);
  ++metrics_.refused_contributions;
  // A goodbye, so an honest worker caught by mistake stops cleanly instead
  // of waiting for a step that no longer includes it.
  proto::HubMessage m;
  m.mutable_stop()->set_reason("refused: " + why);
  m.mutable_stop()->set_steps(step_);
  m.mutable_stop()->set_test_accuracy(-1);
  s->Send(encoder_.Encode(m));
  membership_.Remove(s);
  controller_.Forget(s->id);
  cv_.notify_all();
}

void StepCoordinator::FillResult(size_t k, int64_t step, int64_t local_steps,
                                 proto::StepResult* r) {
  const wire::Segment& seg = master_.segments()[k];
  r->set_step(step);
  r->set_local_steps(static_cast<int32_t>(local_steps));
  r->set_offset(seg.begin);
  if (master_.compression() == Compression::kNone)
    wire::PackFloats(master_.average() + seg.begin, seg.size(), r->mutable_values());
  else
    r->set_packed(master_.encoded_segment(k));
}

int64_t StepCoordinator::ResultPayload(const proto::StepResult& r) {
  return static_cast<int64_t>(r.values_size() * sizeof(float) + r.packed().size());
}

StepCoordinator::StepOutcome StepCoordinator::Tally() {
  StepOutcome out;
  Clock::time_point first_in = Clock::time_point::max();
  for (auto* s : round_) {
    if (!s->inbox.complete()) continue;
    first_in = std::min(first_in, s->complete_at);
    out.samples += s->inbox.batch();
    out.loss_sum += s->inbox.loss_sum();
    s->stats.steps += round_steps_;
    s->steps_since_strike += round_steps_;
    if (s->steps_since_strike >= Quarantine::kForgiveAfterSteps) s->strikes = 0;
    s->stats.samples += s->inbox.batch();
    s->stats.compute_ms += s->inbox.compute_ms();
    // The controller spreads a round's exchange over the round's steps
    // when it sizes the next one (BatchController::Next).
    // A round that began with the full model has no round trip to bound
    // the worker's own compute time with, and that alone is only a claim
    // (BatchController::kMinComputeShare): it tells the controller nothing.
    if (!s->gets_state)
      controller_.Observe(s->id, s->inbox.batch(), s->inbox.compute_ms(),
                          1e3 * Seconds(s->complete_at - published_at_),
                          static_cast<int>(round_steps_));
    if (s->inbox.has_digest()) ++s->stats.digests_checked;
    if (s->inbox.has_digest() && s->inbox.digest() != digest_before_) {
      spdlog::warn("worker {} ({}): weight digest differs from the hub's at step {}; resyncing",
                   s->id, s->name, s->inbox.step());
      Emit(HubEvent::Kind::kWorkerResync, s->id);
      s->needs_resync = true;
    }
  }
  if (out.samples > 0) out.barrier_wait_seconds = Seconds(Clock::now() - first_in);
  return out;
}

void StepCoordinator::ObserveRound() {
  // Whole rounds in which nobody waited for the full model or was left out
  // set the pace the adaptive deadline follows and tell auto what an
  // exchange costs.
  bool steady = true;
  Clock::time_point last = published_at_;
  double compute_ms = 0, seen_ms = -1, exchange_ms = 0;
  for (auto* s : round_) {
    steady = steady && !s->gets_state && s->inbox.complete();
    if (!s->inbox.complete()) continue;
    last = std::max(last, s->complete_at);
    compute_ms = std::max(compute_ms, s->inbox.compute_ms());
    // Each worker's own round trip less its own compute: the round's time
    // less the largest compute would shrink with every hiccup of a noisy
    // device's compute, and a phone five times slower than its partner kept
    // auto in the per-step mode for a third of an epoch that way.
    exchange_ms = std::max(exchange_ms,
                           1e3 * Seconds(s->complete_at - published_at_) - s->inbox.compute_ms());
    // The last to send waited least for the others: its view is the exchange.
    const double seen = s->inbox.exchange_ms();
    if (seen > 0) seen_ms = seen_ms < 0 ? seen : std::min(seen_ms, seen);
  }
  if (!steady) return;
  const double round_seconds = Seconds(last - published_at_);
  // With overlap a round's steps may have begun before it was published:
  // the deadline's pace is at least the compute.
  const double took = std::max(round_seconds, compute_ms / 1e3) / static_cast<double>(round_steps_);
  step_seconds_ema_ = step_seconds_ema_ > 0 ? 0.8 * step_seconds_ema_ + 0.2 * took : took;
  const int before = sync_.steps();
  if (!sync_.Observe(round_steps_, compute_ms + exchange_ms, compute_ms, seen_ms)) return;
  SyncChange change{step_, before, sync_.steps(), sync_.exchange_ms(), sync_.step_compute_ms()};
  if (metrics_.sync_changes.size() < RunMetrics::kMaxSyncChanges)
    metrics_.sync_changes.push_back(change);
  char text[64];
  std::snprintf(text, sizeof text, "%d->%d", change.from, change.to);
  Emit(HubEvent::Kind::kSyncPeriodChanged, -1, text);
  spdlog::info(
      "step {}: --sync-every auto: {} -> {} local steps per round (an exchange takes {:.1f} ms, "
      "a step's compute {:.1f} ms)",
      step_, change.from, change.to, change.exchange_ms, change.step_compute_ms);
}

}  // namespace mt
