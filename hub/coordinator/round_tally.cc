// What a closed round says: its tally, and its times.
#include "hub/coordinator/round_tally.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>

#include "core/util/seconds.h"

namespace mt {

using Clock = std::chrono::steady_clock;

RoundOutcome RoundTally::Close(SegmentReducer& reducer) {
  RoundState& state = r_.state;
  RunMetrics& metrics = r_.metrics;
  if (reducer.step_refused()) {
    // Nothing of it is applied; everyone starts it again from the master
    // weights (the segments sent so far are discarded with the full state).
    reducer.ClearRefused();
    state.have_result = false;
    ++metrics.steps_refused;
    spdlog::warn("step {} is not applied: a contribution was refused; it runs again",
                 state.step + 1);
    return RoundOutcome{};
  }
  RoundOutcome out = Count();
  if (out.samples == 0) {
    // Everyone dropped out of this step: run it again. Segments averaged
    // before that went only to workers that now get the full state; the
    // master has applied nothing.
    state.have_result = false;
    return out;
  }
  state.Close(out.samples, out.loss_sum);
  metrics.samples += out.samples;
  out.gradient_bytes_in = metrics.gradient_bytes_in;
  out.result_bytes_out = metrics.result_bytes_out.load();
  out.steps = state.steps;
  Observe();
  r_.roster.Emit(HubEvent::Kind::kStepDone);
  return out;
}

RoundOutcome RoundTally::Count() {
  RoundOutcome out;
  Clock::time_point first_in = Clock::time_point::max();
  for (auto* s : r_.round) {
    if (!s->inbox.complete()) continue;
    // Its own steps: a short round (hub/policy/short_rounds.h) has fewer.
    const int steps = s->assignment.local_steps > 0 ? s->assignment.local_steps
                                                    : static_cast<int>(r_.state.steps);
    const Clock::time_point in = s->inbox.completed_at();
    first_in = std::min(first_in, in);
    out.samples += s->inbox.batch();
    out.loss_sum += s->inbox.loss_sum();
    s->stats.steps += steps;
    s->quarantine.TookPart(steps);
    s->stats.samples += s->inbox.batch();
    s->stats.compute_ms += s->inbox.compute_ms();
    // The controller spreads a round's exchange over the round's steps
    // when it sizes the next one (BatchController::Next).
    // A round that began with the full model has no round trip to bound
    // the worker's own compute time with, and that alone is only a claim
    // (BatchController::kMinComputeShare): it tells the controller nothing.
    if (!s->full_state.this_step)
      r_.controller.Observe(s->id, s->inbox.batch(), s->inbox.compute_ms(),
                            1e3 * Seconds(in - deadline_.published_at()), steps);
    if (s->inbox.has_digest()) ++s->stats.digests_checked;
    if (s->inbox.has_digest() && s->inbox.digest() != r_.state.digest_before) {
      spdlog::warn("worker {} ({}): weight digest differs from the hub's at step {}; resyncing",
                   s->id, s->name, s->inbox.step());
      r_.roster.Emit(HubEvent::Kind::kWorkerResync, s->id);
      s->full_state.next_step = true;
    }
  }
  if (out.samples > 0) out.barrier_wait_seconds = Seconds(Clock::now() - first_in);
  return out;
}

void RoundTally::Observe() {
  // Whole rounds in which nobody waited for the full model or was left out
  // set the pace the adaptive deadline follows and tell auto what an
  // exchange costs.
  const Clock::time_point published_at = deadline_.published_at();
  bool steady = true;
  Clock::time_point last = published_at;
  double compute_ms = 0, seen_ms = -1, exchange_ms = 0;
  for (auto* s : r_.round) {
    steady = steady && !s->full_state.this_step && s->inbox.complete();
    if (!s->inbox.complete()) continue;
    last = std::max(last, s->inbox.completed_at());
    compute_ms = std::max(compute_ms, s->inbox.compute_ms());
    // Each worker's own round trip less its own compute: the round's time
    // less the largest compute would shrink with every hiccup of a noisy
    // device's compute, and a phone five times slower than its partner kept
    // auto in the per-step mode for a third of an epoch that way.
    exchange_ms = std::max(exchange_ms, 1e3 * Seconds(s->inbox.completed_at() - published_at) -
                                            s->inbox.compute_ms());
    // The last to send waited least for the others: its view is the exchange.
    const double seen = s->inbox.exchange_ms();
    if (seen > 0) seen_ms = seen_ms < 0 ? seen : std::min(seen_ms, seen);
  }
  if (!steady) return;
  const RoundState& state = r_.state;
  const double round_seconds = Seconds(last - published_at);
  // With overlap a round's steps may have begun before it was published:
  // the deadline's pace is at least the compute.
  deadline_.ObservePace(std::max(round_seconds, compute_ms / 1e3) /
                        static_cast<double>(state.steps));
  ExchangePolicy& exchange = r_.exchange;
  const int before = exchange.sync.steps();
  const Compression encoded = exchange.compression.current();
  const ExchangePolicy::Changes changed =
      exchange.Observe(state.steps, compute_ms + exchange_ms, compute_ms, seen_ms);
  if (changed.compression) RecordCompressionChange(encoded);
  if (changed.sync) RecordSyncChange(r_, before);
}

void RoundTally::RecordSyncChange(RoundContext& r, int before) {
  const SyncPeriod& sync = r.exchange.sync;
  SyncChange change{r.state.step, before, sync.steps(), sync.exchange_ms(), sync.step_compute_ms()};
  if (r.metrics.sync_changes.size() < RunMetrics::kMaxSyncChanges)
    r.metrics.sync_changes.push_back(change);
  char text[64];
  std::snprintf(text, sizeof text, "%d->%d", change.from, change.to);
  r.roster.Emit(HubEvent::Kind::kSyncPeriodChanged, -1, text);
  spdlog::info(
      "step {}: --sync-every auto: {} -> {} local steps per round (an exchange takes {:.1f} ms, "
      "a step's compute {:.1f} ms)",
      r.state.step, change.from, change.to, change.exchange_ms, change.step_compute_ms);
}

void RoundTally::RecordCompressionChange(Compression from) {
  const CompressionChoice& choice = r_.exchange.compression;
  // The estimates it decided on were reset with the change: the last ones
  // travel in the record.
  CompressionChange change{r_.state.step, from, choice.current(), choice.decided_exchange_ms(),
                           choice.decided_budget_ms()};
  if (r_.metrics.compression_changes.size() < RunMetrics::kMaxSyncChanges)
    r_.metrics.compression_changes.push_back(change);
  r_.roster.Emit(HubEvent::Kind::kCompressionChanged, -1,
                 std::string(CompressionName(from)) + "->" + CompressionName(change.to));
  spdlog::info(
      "step {}: --compress auto: {} -> {} (an exchange takes {:.1f} ms at {}; a round may spend "
      "{:.1f} ms)",
      r_.state.step, CompressionName(from), CompressionName(change.to), change.exchange_ms,
      CompressionName(from), change.budget_ms);
}

}  // namespace mt
