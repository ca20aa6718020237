// The coordinator's side of a round: how long it is, who computes which
// samples (hub/policy/batch_controller.h), the plan and the previous result sent
// out (hub/coordinator/step_messages.h), who finished it, and what its times
// tell the deadline (hub/policy/step_deadline.h) and --sync-every auto.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>

#include "core/util/seconds.h"
#include "hub/coordinator/step_coordinator.h"
#include "hub/report/hub_trace.h"

namespace mt {
trace::SpanSink* StepCoordinator::spans() const { return trace_ ? trace_->hub() : nullptr; }

int64_t StepCoordinator::RoundLength() const {
  const int64_t step = state_.step;
  const int64_t epoch = plan_.EpochOf(step);
  int64_t h = 0;
  while (h < exchange_.sync.steps() && step + h < plan_.total_steps() &&
         plan_.EpochOf(step + h) == epoch && plan_.BatchAt(step + h) == plan_.batch()) {
    ++h;
    const int64_t done = step + h;
    // A checkpoint is of an exact step; evaluations wait for the round's
    // end (TrainingLoop::EvaluationDue), so they do not cut it.
    if (!config_.checkpoint_dir.empty() && plan_.CheckpointDue(done, config_.checkpoint_every))
      break;
  }
  return std::max<int64_t>(h, 1);  // a short last step is a round of its own
}

void StepCoordinator::Assign(const std::vector<WorkerSlot*>& who) {
  const int64_t step = state_.step;
  const int64_t epoch = plan_.EpochOf(step);
  const int64_t position = plan_.FirstSample(step);
  const int total = plan_.BatchAt(step);
  const int steps = static_cast<int>(state_.steps);
  std::vector<BatchController::Member> members;
  for (auto* s : who) {
    const double share =
        config_.worker_batches.empty()
            ? 1.0
            : config_.worker_batches[static_cast<size_t>(s->id) % config_.worker_batches.size()];
    members.push_back({s->id, s->max_batch, share});
  }
  const std::vector<int> batches =
      controller_.Next(total, members, steps, state_.local ? BatchController::kMinLocalBatch : 1);
  int64_t offset = position;
  bool changed = false;
  for (size_t i = 0; i < who.size(); ++i) {
    Assignment& a = who[i]->assignment;
    a.step = step;
    a.epoch = epoch;
    a.offset = offset;
    a.batch = batches[i];
    a.worker_id = who[i]->id;
    // With local SGD every round sends changes, a round of one step too:
    // the workers' optimizer states are their own, so the hub cannot take
    // an optimizer step for them.
    a.local_steps = state_.local ? steps : 0;
    a.stride = state_.local ? total : 0;
    offset += batches[i];
    who[i]->inbox.Expect(step, batches[i] * steps);
    changed = changed || batches[i] != who[i]->last_batch;
  }
  // The epoch's last step is shorter; its split says nothing about speeds.
  if (changed && total == plan_.batch()) RecordBatchChange(who, batches);
}

void StepCoordinator::RecordBatchChange(const std::vector<WorkerSlot*>& who,
                                        const std::vector<int>& batches) {
  BatchChange change{state_.step, {}};
  std::string text;
  for (size_t i = 0; i < who.size(); ++i) {
    WorkerSlot* s = who[i];
    const double t = controller_.ms_per_sample(s->id);
    char buf[160];
    std::snprintf(buf, sizeof buf, " %s %d->%d", s->name.c_str(), s->last_batch, batches[i]);
    text += buf;
    if (t > 0) text += " (" + std::to_string(static_cast<int>(t * 1000)) + " us/sample)";
    s->last_batch = batches[i];
    change.batches.emplace_back(s->name, batches[i]);
  }
  if (metrics_.batch_changes.size() < RunMetrics::kMaxBatchChanges)
    metrics_.batch_changes.push_back(std::move(change));
  ++metrics_.batch_change_count;
  roster_.Emit(HubEvent::Kind::kBatchesChanged, -1, text);
  // The progress line counts the changes; each one in full only when asked.
  spdlog::debug("step {}: batches{}", state_.step + 1, text);
}

void StepCoordinator::Broadcast(const std::vector<WorkerSlot*>& who, bool with_result) {
  // One plan and one set of result chunks, encoded once and sent to every
  // worker as the same bytes.
  const trace::ScopedSpan span(spans(), trace::SpanKind::kBroadcast, -1, state_.step);
  messages_.SetPlan(state_.step, trace_ ? trace::NowMicros() : 0, who);
  // The other segments of the result went out as they were averaged
  // (ReduceReadySegments); the last one carries the plan.
  Encoded last_chunk;
  int64_t result_payload = 0;
  if (with_result)
    last_chunk = messages_.Result(reducer_.segment_count() - 1, state_.average_step,
                                  state_.average_local ? state_.average_steps : 0, /*last=*/true,
                                  state_.mean_loss, &result_payload);
  Encoded plan_alone;
  for (auto* s : who) {
    if (s->full_state.this_step) {
      messages_.State(state_.step, [s](const Encoded& m) { return s->Send(m); });
      if (!plan_alone) plan_alone = messages_.Plan();
      s->Send(plan_alone);
    } else if (last_chunk) {
      s->Send(last_chunk);
      metrics_.result_bytes_out += result_payload;
      s->stats.bytes_out += result_payload;
    }
  }
}

StepCoordinator::StepOutcome StepCoordinator::Tally() {
  StepOutcome out;
  const int64_t steps = state_.steps;
  Clock::time_point first_in = Clock::time_point::max();
  for (auto* s : round_) {
    if (!s->inbox.complete()) continue;
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
      controller_.Observe(s->id, s->inbox.batch(), s->inbox.compute_ms(),
                          1e3 * Seconds(in - deadline_.published_at()), static_cast<int>(steps));
    if (s->inbox.has_digest()) ++s->stats.digests_checked;
    if (s->inbox.has_digest() && s->inbox.digest() != state_.digest_before) {
      spdlog::warn("worker {} ({}): weight digest differs from the hub's at step {}; resyncing",
                   s->id, s->name, s->inbox.step());
      roster_.Emit(HubEvent::Kind::kWorkerResync, s->id);
      s->full_state.next_step = true;
    }
  }
  if (out.samples > 0) out.barrier_wait_seconds = Seconds(Clock::now() - first_in);
  return out;
}

void StepCoordinator::ObserveRound() {
  // Whole rounds in which nobody waited for the full model or was left out
  // set the pace the adaptive deadline follows and tell auto what an
  // exchange costs.
  const Clock::time_point published_at = deadline_.published_at();
  bool steady = true;
  Clock::time_point last = published_at;
  double compute_ms = 0, seen_ms = -1, exchange_ms = 0;
  for (auto* s : round_) {
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
  const double round_seconds = Seconds(last - published_at);
  // With overlap a round's steps may have begun before it was published:
  // the deadline's pace is at least the compute.
  deadline_.ObservePace(std::max(round_seconds, compute_ms / 1e3) /
                        static_cast<double>(state_.steps));
  const int before = exchange_.sync.steps();
  const Compression encoded = exchange_.compression.current();
  const ExchangePolicy::Changes changed =
      exchange_.Observe(state_.steps, compute_ms + exchange_ms, compute_ms, seen_ms);
  if (changed.compression) RecordCompressionChange(encoded);
  if (!changed.sync) return;
  const SyncPeriod& sync = exchange_.sync;
  SyncChange change{state_.step, before, sync.steps(), sync.exchange_ms(), sync.step_compute_ms()};
  if (metrics_.sync_changes.size() < RunMetrics::kMaxSyncChanges)
    metrics_.sync_changes.push_back(change);
  char text[64];
  std::snprintf(text, sizeof text, "%d->%d", change.from, change.to);
  roster_.Emit(HubEvent::Kind::kSyncPeriodChanged, -1, text);
  spdlog::info(
      "step {}: --sync-every auto: {} -> {} local steps per round (an exchange takes {:.1f} ms, "
      "a step's compute {:.1f} ms)",
      state_.step, change.from, change.to, change.exchange_ms, change.step_compute_ms);
}

void StepCoordinator::RecordCompressionChange(Compression from) {
  const CompressionChoice& choice = exchange_.compression;
  // The estimates it decided on were reset with the change: the last ones
  // travel in the record.
  CompressionChange change{state_.step, from, choice.current(), choice.decided_exchange_ms(),
                           choice.decided_budget_ms()};
  if (metrics_.compression_changes.size() < RunMetrics::kMaxSyncChanges)
    metrics_.compression_changes.push_back(change);
  roster_.Emit(HubEvent::Kind::kCompressionChanged, -1,
               std::string(CompressionName(from)) + "->" + CompressionName(change.to));
  spdlog::info(
      "step {}: --compress auto: {} -> {} (an exchange takes {:.1f} ms at {}; a round may spend "
      "{:.1f} ms)",
      state_.step, CompressionName(from), CompressionName(change.to), change.exchange_ms,
      CompressionName(from), change.budget_ms);
}

std::string StepCoordinator::ParticipantSummary() {
  struct Row {
    const WorkerSlot* slot;
    double us_per_sample;
  };
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Row> rows;
  int late = 0;
  for (const auto& [id, s] : roster_.membership().all()) {
    if (s->state == WorkerSlot::State::kLate) ++late;
    if (s->state != WorkerSlot::State::kActive || s->last_batch <= 0) continue;
    rows.push_back({s.get(), 1000 * controller_.ms_per_sample(id)});
  }
  std::string out;
  char buf[192];
  if (rows.size() <= kListedWorkers) {
    for (const Row& r : rows) {
      std::snprintf(buf, sizeof buf, "%s %s b%d %.0f us/sample", out.empty() ? "" : ",",
                    r.slot->name.c_str(), r.slot->last_batch, r.us_per_sample);
      out += buf;
    }
  } else {
    // Past a screen's width of workers, the spread says more than the list.
    std::vector<int> batches;
    for (const Row& r : rows) batches.push_back(r.slot->last_batch);
    std::sort(batches.begin(), batches.end());
    const Row& slowest =
        *std::max_element(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
          return a.us_per_sample < b.us_per_sample;
        });
    std::snprintf(buf, sizeof buf,
                  " %zu workers, batches %d..%d (median %d), slowest %s %.0f us/sample",
                  rows.size(), batches.front(), batches.back(), batches[batches.size() / 2],
                  slowest.slot->name.c_str(), slowest.us_per_sample);
    out += buf;
  }
  if (late > 0) out += "; " + std::to_string(late) + " left out";
  const int64_t changes = metrics_.batch_change_count - batch_changes_summarised_;
  batch_changes_summarised_ = metrics_.batch_change_count;
  if (changes > 0) out += "; batches changed " + std::to_string(changes) + "x";
  return out;
}

}  // namespace mt
