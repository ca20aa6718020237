// The coordinator's run-thread side: one step, in the order it happens.
#include "hub/step_coordinator.h"
#include "hub/quarantine.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>

#include "core/optim/optimizer_proto.h"
#include "core/util/process_stats.h"
#include "hub/hub_trace.h"
#include "proto/wire.h"

namespace mt {
namespace {

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace

trace::SpanSink* StepCoordinator::spans() const { return trace_ ? trace_->hub() : nullptr; }

void StepCoordinator::StartAt(int64_t step) {
  std::lock_guard<std::mutex> lock(mu_);
  step_ = step;
}

void StepCoordinator::PublishRunningStats(std::vector<float> stats) {
  std::lock_guard<std::mutex> lock(mu_);
  running_stats_ = std::move(stats);
}

bool StepCoordinator::WaitForWorkers() {
  std::unique_lock<std::mutex> lock(mu_);
  return WaitForParticipants(lock, config_.workers, [&](int n) {
    spdlog::info("waiting for workers: {} of {} ready", n, config_.workers);
  });
}

bool StepCoordinator::WaitForMinWorkers(std::unique_lock<std::mutex>& lock) {
  return WaitForParticipants(lock, config_.min_workers, [&](int n) {
    if (n == 0)
      spdlog::warn("no workers left; waiting for one to join");
    else
      spdlog::warn(
          "{} worker(s) in the run, fewer than --min-workers {}: waiting for more before step {}",
          n, config_.min_workers, step_ + 1);
  });
}

bool StepCoordinator::WaitForParticipants(std::unique_lock<std::mutex>& lock, int needed,
                                          const std::function<void(int)>& say_why) {
  auto last_log = Clock::now() - std::chrono::hours(1);
  for (;;) {
    ReleaseQuarantined();
    const int n = static_cast<int>(membership_.Participants().size());
    if (n >= needed) return true;
    if (stop_) return false;
    if (Seconds(Clock::now() - last_log) > 10) {
      say_why(n);
      last_log = Clock::now();
    }
    // Woken by every join, stream and stop; the timeout only paces the log.
    cv_.wait_for(lock, std::chrono::seconds(1));
  }
}

bool StepCoordinator::PublishStep() {
  std::unique_lock<std::mutex> lock(mu_);
  if (published_ahead_) {  // by the transport, as the last step completed
    published_ahead_ = false;
    return true;
  }
  std::vector<WorkerSlot*> who;
  for (;;) {
    if (stop_) return false;
    ReleaseQuarantined();
    who = membership_.Participants();
    if (static_cast<int>(who.size()) >= config_.min_workers) break;
    if (who.empty()) have_result_ = false;  // whoever comes next starts from the full state
    if (!WaitForMinWorkers(lock)) return false;
  }
  BeginStep(who);
  lock.unlock();
  // Sending happens outside the lock: slots never move, and only this
  // thread changes assignments until CompleteStep arms the fast path.
  const double cpu = ThreadCpuSeconds();
  const auto wall = Clock::now();
  Broadcast(who, published_result_);
  metrics_.broadcast_seconds += ThreadCpuSeconds() - cpu;
  metrics_.wall_seconds += Seconds(Clock::now() - wall);
  return true;
}

void StepCoordinator::BeginStep(const std::vector<WorkerSlot*>& who, bool digest_now) {
  round_steps_ = RoundLength();
  round_local_ = sync_.local();
  Assign(who);
  // Decided under the lock, so a stream that breaks meanwhile cannot be
  // brought back to life by the broadcast.
  for (auto* s : who) {
    s->gets_state = s->state == WorkerSlot::State::kWaiting || s->needs_resync || !have_result_;
    if (s->needs_resync) ++s->stats.resyncs;
    s->needs_resync = false;
    s->state = WorkerSlot::State::kActive;
  }
  // Workers send a digest only every digest_every steps; hash only then.
  if (digest_now && step_ % config_.digest_every == 0) digest_before_ = master_.Digest();
  round_ = who;
  step_refused_ = false;
  published_result_ = have_result_;
  deadline_extension_ = Clock::duration::zero();
  published_at_ = Clock::now();
  Emit(HubEvent::Kind::kStepPublished);
}

void StepCoordinator::AdvanceIfComplete() {
  if (!advance_armed_ || stop_ || finished_) return;
  bool any = false;
  for (auto* s : round_) {
    if (s->state == WorkerSlot::State::kGone) continue;
    if (!s->inbox.complete()) return;
    any = true;
  }
  // Nobody finished, the run ends, or too few are left: the run thread
  // decides what happens next.
  if (!any || step_refused_ || step_ + round_steps_ >= plan_.total_steps()) return;
  ReleaseQuarantined();
  std::vector<WorkerSlot*> next = membership_.Participants();
  if (static_cast<int>(next.size()) < config_.min_workers) return;
  const double cpu = ThreadCpuSeconds();
  const auto wall = Clock::now();
  advanced_outcome_ = CloseStep();
  next = membership_.Participants();  // the same slots: closing changes no states
  BeginStep(next, /*digest_now=*/false);
  // Under the lock: nothing else may change assignments while they go out.
  // The workers' next plan goes out before the master's own optimizer step
  // (it is not on their path), unless someone needs the full state.
  bool state = false;
  for (auto* s : next) state = state || s->gets_state;
  if (state) ApplyToMaster();
  Broadcast(next, published_result_);
  if (!state) ApplyToMaster();
  if (step_ % config_.digest_every == 0) digest_before_ = master_.Digest();
  metrics_.broadcast_seconds += ThreadCpuSeconds() - cpu;
  metrics_.wall_seconds += Seconds(Clock::now() - wall);
  advance_armed_ = false;
  advanced_ = true;
  published_ahead_ = true;
  cv_.notify_all();
}

int64_t StepCoordinator::RoundLength() const {
  const int64_t epoch = plan_.EpochOf(step_);
  int64_t h = 0;
  while (h < sync_.steps() && step_ + h < plan_.total_steps() &&
         plan_.EpochOf(step_ + h) == epoch && plan_.BatchAt(step_ + h) == plan_.batch()) {
    ++h;
    const int64_t done = step_ + h;
    if (plan_.CheckpointDue(done, config_.checkpoint_every)) break;
    if (config_.eval_every > 0 && done % config_.eval_every == 0) break;
  }
  return std::max<int64_t>(h, 1);  // a short last step is a round of its own
}

void StepCoordinator::Assign(const std::vector<WorkerSlot*>& who) {
  const int64_t epoch = plan_.EpochOf(step_);
  const int64_t position = plan_.FirstSample(step_);
  const int total = plan_.BatchAt(step_);
  std::vector<BatchController::Member> members;
  for (auto* s : who) {
    const double share =
        config_.worker_batches.empty()
            ? 1.0
            : config_.worker_batches[static_cast<size_t>(s->id) % config_.worker_batches.size()];
    members.push_back({s->id, s->max_batch, share});
  }
  const std::vector<int> batches =
      controller_.Next(total, members, static_cast<int>(round_steps_),
                       round_local_ ? BatchController::kMinLocalBatch : 1);
  int64_t offset = position;
  bool changed = false;
  for (size_t i = 0; i < who.size(); ++i) {
    proto::Assignment& a = who[i]->assignment;
    a.set_step(step_);
    a.set_epoch(epoch);
    a.set_offset(offset);
    a.set_batch(batches[i]);
    a.set_worker_id(who[i]->id);
    // With local SGD every round sends changes, a round of one step too:
    // the workers' optimizer states are their own, so the hub cannot take
    // an optimizer step for them.
    a.set_local_steps(round_local_ ? static_cast<int32_t>(round_steps_) : 0);
    a.set_stride(round_local_ ? total : 0);
    offset += batches[i];
    who[i]->inbox.Expect(step_, batches[i] * static_cast<int>(round_steps_));
    who[i]->align_dot = who[i]->align_self = who[i]->align_others = 0;
    changed = changed || batches[i] != who[i]->last_batch;
  }
  reduced_segments_ = 0;
  // The epoch's last step is shorter; its split says nothing about speeds.
  if (changed && total == plan_.batch()) RecordBatchChange(who, batches);
}

void StepCoordinator::RecordBatchChange(const std::vector<WorkerSlot*>& who,
                                        const std::vector<int>& batches) {
  BatchChange change{step_, {}};
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
  Emit(HubEvent::Kind::kBatchesChanged, -1, text);
  // The progress line counts the changes; each one in full only when asked.
  spdlog::debug("step {}: batches{}", step_ + 1, text);
}

void StepCoordinator::SendState(WorkerSlot* slot) {
  OptimizerState state;
  const std::vector<float> all = master_.FullState(&state);
  const size_t chunks = wire::ChunkCount(all.size());
  proto::HubMessage m;
  for (size_t c = 0; c < chunks; ++c) {
    auto* s = m.mutable_state();
    const wire::ChunkRange r = wire::Chunk(c, all.size());
    s->set_step(step_);
    s->set_offset(r.begin);
    wire::PackFloats(all.data() + r.begin, r.size, s->mutable_values());
    if (c + 1 == chunks) {
      s->set_last(true);
      *s->mutable_optimizer() = ToProto(state);
    }
    if (!slot->Send(encoder_.Encode(m))) return;  // the transport notices that it broke
  }
}

void StepCoordinator::Broadcast(const std::vector<WorkerSlot*>& who, bool with_result) {
  // One plan and one set of result chunks, encoded once and sent to every
  // worker as the same bytes.
  const trace::ScopedSpan span(spans(), trace::SpanKind::kBroadcast, -1, step_);
  proto::StepPlan plan;
  plan.set_step(step_);
  // Tracing: when it left, for each worker's clock offset (hub/hub_trace.h).
  if (trace_) plan.set_hub_time_us(trace::NowMicros());
  for (auto* s : who) *plan.add_assignments() = s->assignment;
  // The other segments of the result went out as they were averaged
  // (ReduceReadySegments); the last one carries the plan.
  Encoded last_chunk;
  int64_t result_payload = 0;
  if (with_result) {
    const size_t k = master_.segments().size() - 1;
    proto::HubMessage m;
    FillResult(k, average_step_, average_local_ ? average_steps_ : 0, m.mutable_result());
    m.mutable_result()->set_last(true);
    m.mutable_result()->set_mean_loss(last_loss_);
    *m.mutable_result()->mutable_plan() = plan;
    result_payload = ResultPayload(m.result());
    last_chunk = encoder_.Encode(m);
  }
  Encoded plan_alone;
  for (auto* s : who) {
    if (s->gets_state) {
      SendState(s);
      if (!plan_alone) {
        proto::HubMessage m;
        *m.mutable_plan() = plan;
        plan_alone = encoder_.Encode(m);
      }
      s->Send(plan_alone);
    } else if (last_chunk) {
      s->Send(last_chunk);
      metrics_.result_bytes_out += result_payload;
      s->stats.bytes_out += result_payload;
    }
  }
}

double StepCoordinator::DeadlineSeconds(const std::vector<WorkerSlot*>& who) const {
  // Per step, so a round of h local steps waits h times as long.
  const double steps = static_cast<double>(round_steps_);
  const double d = config_.step_deadline_seconds > 0
                       ? config_.step_deadline_seconds * steps
                       : std::max(config_.deadline_floor_seconds,
                                  config_.deadline_factor * step_seconds_ema_ * steps);
  // The full model has to travel first: give those steps a floor more.
  for (auto* s : who)
    if (s->gets_state) return d + config_.deadline_floor_seconds;
  return d;
}

void StepCoordinator::ReleaseQuarantined() {
  const auto now = Clock::now();
  for (const auto& s : membership_.all()) {
    if (s->state != WorkerSlot::State::kLate || !s->back_ready || now < s->quarantined_until)
      continue;
    s->state = WorkerSlot::State::kWaiting;
    s->back_ready = false;
    spdlog::info("worker {} ({}) is back after missing a step; it rejoins at the next step", s->id,
                 s->name);
    Emit(HubEvent::Kind::kWorkerBack, s->id);
  }
}

void StepCoordinator::LeaveOut(WorkerSlot* s, double waited_seconds) {
  s->state = WorkerSlot::State::kLate;
  s->inbox.Discard();
  ++s->stats.steps_missed;
  ++s->strikes;
  s->steps_since_strike = 0;
  s->back_ready = false;
  s->quarantined_until = Clock::now() + Quarantine::For(s->strikes);
  // It took at least this long: the controller gives it less next time.
  controller_.Observe(s->id, s->assignment.batch() * static_cast<int>(round_steps_),
                      1e3 * waited_seconds, -1, static_cast<int>(round_steps_));
  char reason[128];
  std::snprintf(reason, sizeof reason, "missed the deadline of step %lld (%.1f s)",
                static_cast<long long>(step_ + 1), waited_seconds);
  spdlog::warn("worker {} ({}) {}; the step goes on without it", s->id, s->name, reason);
  Emit(HubEvent::Kind::kWorkerLeftOut, s->id, reason);
  proto::HubMessage m;
  m.mutable_left_out()->set_step(step_);
  m.mutable_left_out()->set_reason(reason);
  s->Send(encoder_.Encode(m));
}

bool StepCoordinator::AwaitGradients(std::unique_lock<std::mutex>& lock) {
  const auto deadline = published_at_ + deadline_extension_ +
                        std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(DeadlineSeconds(round_)));
  for (;;) {
    if (advanced_) return true;  // the transport completed it (AdvanceIfComplete)
    bool all = true;
    for (auto* s : round_)
      all = all && (s->state == WorkerSlot::State::kGone || s->inbox.complete());
    if (all) return true;
    if (stop_) return false;
    const auto now = Clock::now();
    if (now >= deadline) {
      for (auto* s : round_)
        if (s->state == WorkerSlot::State::kActive && !s->inbox.complete())
          LeaveOut(s, Seconds(now - published_at_));
      return true;
    }
    cv_.wait_until(lock, deadline);
  }
}

StepCoordinator::StepOutcome StepCoordinator::CompleteStep(bool next_may_follow) {
  std::unique_lock<std::mutex> lock(mu_);
  advance_armed_ = next_may_follow;
  const int64_t wait_begin = trace_ ? trace::NowMicros() : 0, waited_for = step_;
  const bool in = AwaitGradients(lock);
  if (trace_)
    spans()->Add(trace::MakeSpan(trace::SpanKind::kBarrierWait, wait_begin, trace::NowMicros(), -1,
                                 waited_for));
  advance_armed_ = false;
  if (advanced_) {
    advanced_ = false;
    return advanced_outcome_;
  }
  if (!in) return StepOutcome{true, 0, 0};
  const double cpu = ThreadCpuSeconds();
  const auto wall = Clock::now();
  StepOutcome out = FinishStep();
  metrics_.reduce_seconds += ThreadCpuSeconds() - cpu;
  metrics_.wall_seconds += Seconds(Clock::now() - wall);
  return out;
}

StepCoordinator::StepOutcome StepCoordinator::FinishStep() {
  const StepOutcome out = CloseStep();
  if (out.samples > 0) ApplyToMaster();
  return out;
}

StepCoordinator::StepOutcome StepCoordinator::CloseStep() {
  ReduceReadySegments();  // what latecomers held back, now that they are out
  if (step_refused_) {
    // Nothing of it is applied; everyone starts it again from the master
    // weights (the segments sent so far are discarded with the full state).
    step_refused_ = false;
    have_result_ = false;
    ++metrics_.steps_refused;
    spdlog::warn("step {} is not applied: a contribution was refused; it runs again", step_ + 1);
    return StepOutcome{};
  }
  StepOutcome out = Tally();
  if (out.samples == 0) {
    // Everyone dropped out of this step: run it again. Segments averaged
    // before that went only to workers that now get the full state; the
    // master has applied nothing.
    have_result_ = false;
    return out;
  }
  non_finite_refusals_ = 0;
  average_step_ = step_;
  average_steps_ = round_steps_;
  average_local_ = round_local_;
  have_result_ = true;
  last_loss_ = out.loss_sum / static_cast<double>(out.samples);
  metrics_.samples += out.samples;
  out.gradient_bytes_in = metrics_.gradient_bytes_in;
  out.result_bytes_out = metrics_.result_bytes_out.load();
  out.steps = round_steps_;
  step_ += round_steps_;
  ObserveRound();
  Emit(HubEvent::Kind::kStepDone);
  return out;
}

void StepCoordinator::ApplyToMaster() {
  const trace::ScopedSpan span(spans(), trace::SpanKind::kOptimizer, -1, average_step_);
  if (average_local_)
    master_.ApplyAverageChange();
  else
    master_.ApplyAverage();
}

int StepCoordinator::sync_every() const {
  std::lock_guard<std::mutex> lock(mu_);
  return sync_.steps();
}

std::string StepCoordinator::ParticipantSummary() {
  struct Row {
    const WorkerSlot* slot;
    double us_per_sample;
  };
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Row> rows;
  int late = 0;
  for (const auto& s : membership_.all()) {
    if (s->state == WorkerSlot::State::kLate) ++late;
    if (s->state != WorkerSlot::State::kActive || s->last_batch <= 0) continue;
    rows.push_back({s.get(), 1000 * controller_.ms_per_sample(s->id)});
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
