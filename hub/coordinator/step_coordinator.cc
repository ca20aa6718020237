// The coordinator's step cycle, in the order it happens: publish, the
// transport's fast path, the barrier, close and apply.
#include "hub/coordinator/step_coordinator.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "core/util/seconds.h"
#include "hub/coordinator/participant_summary.h"
#include "hub/coordinator/participant_wait.h"
#include "hub/policy/plausible_speed.h"
#include "hub/report/hub_trace.h"
#include "hub/report/hub_work_timer.h"

namespace mt {
namespace {

bool AnyGetsState(const std::vector<WorkerSlot*>& who) {
  return std::any_of(who.begin(), who.end(), [](auto* s) { return s->full_state.this_step; });
}

}  // namespace

StepCoordinator::StepCoordinator(const HubConfig& config, const proto::ModelSpec& spec,
                                 RunPlan& plan, MasterModel& master, MessageEncoder& encoder,
                                 RunMetrics& metrics, HubEventSink* events)
    : config_(config),
      plan_(plan),
      master_(master),
      exchange_(config.local_sgd.sync_every, config.local_sgd.overlap_rounds, config.compression,
                SyncPeriod::AutoRoundCeiling(config.optimizer.kind),
                config.compression_warmup_steps),
      messages_(encoder, config, spec, master, exchange_.compression, plan.batch()),
      metrics_(metrics),
      deadline_(config.deadline),
      controller_(config.worker_batches.empty() ? config.batch_policy : BatchPolicy::kFixed),
      roster_(WorkerRoster::RulesOf(config, plan, master), controller_, attendance_, messages_,
              metrics, events, state_, round_),
      context_{config_,  plan_,       master_, exchange_, messages_,
               metrics_, controller_, roster_, state_,    round_},
      planner_(context_, attendance_),
      tally_(context_, deadline_),
      reduction_(context_) {
  controller_.SetHintFloor(FastestPlausibleMsPerSample(spec, master.model()));
  messages_.SetPrivacy(reduction_.dp().ForWorkers());
  if (config.secure_aggregation) secure_ = std::make_unique<SecureRound>(context_, config.workers);
}

void StepCoordinator::set_trace(HubTrace* trace) {
  trace_ = trace;
  roster_.set_trace(trace);
  context_.spans = trace ? trace->hub() : nullptr;
}

void StepCoordinator::StartAt(int64_t step) {
  std::lock_guard<std::mutex> lock(mu_);
  state_.step = step;
  reduction_.dp().CountEarlierRounds(step);  // --dp-clip: the privacy spent before the checkpoint
}

void StepCoordinator::PublishRunningStats(std::vector<float> stats) {
  Locked([&] { messages_.SetRunningStats(std::move(stats)); });
}

void StepCoordinator::SetPartition(std::vector<ClassShare> shares) {
  Locked([&] { messages_.SetPartition(std::move(shares)); });
}

bool StepCoordinator::WaitForWorkers() {
  std::unique_lock<std::mutex> lock(mu_);
  return WaitForParticipants(lock, config_.workers, [&](int n) {
    spdlog::info("waiting for workers: {} of {} ready", n, config_.workers);
  });
}

int StepCoordinator::FollowingBatch(int per_worker, std::string* timings) const {
  return Locked([&] { return roster_.FollowingBatch(per_worker, timings); });
}

void StepCoordinator::SetGlobalBatch(int64_t batch) {
  Locked([&] { plan_ = plan_.WithBatch(batch); });
}

bool StepCoordinator::PublishStep() {
  std::unique_lock<std::mutex> lock(mu_);
  if (fast_.published_ahead) {  // by the transport, as the last step completed
    fast_.published_ahead = false;
    return true;
  }
  std::vector<WorkerSlot*> who;
  for (;;) {
    if (stop_) return false;
    roster_.ReleaseQuarantined();
    who = Takers();
    if (static_cast<int>(who.size()) >= config_.min_workers) break;
    if (who.empty()) state_.have_result = false;  // whoever comes next starts from the full state
    if (!WaitForParticipants(lock, config_.min_workers, [&](int n) {
          SayTooFewWorkers(n, config_.min_workers, state_.step + 1);
        }))
      return false;
  }
  who = planner_.Attend(std::move(who), secure_ != nullptr);
  BeginStep(who);
  lock.unlock();
  // Sending happens outside the lock: slots never move, and only this
  // thread changes assignments until CompleteStep arms the fast path.
  const HubWorkTimer timer(metrics_.broadcast_seconds, metrics_.wall_seconds);
  planner_.Publish(who, state_.published_result, reduction_.reducer().segment_count() - 1);
  return true;
}

std::vector<WorkerSlot*> StepCoordinator::Takers() const {
  std::vector<WorkerSlot*> present = roster_.membership().Participants();
  return secure_ ? secure_->Takers(present) : present;
}

void StepCoordinator::BeginStep(const std::vector<WorkerSlot*>& who, bool digest_now) {
  planner_.Begin(who);
  // Workers send a digest only every digest_every steps; hash only then.
  if (digest_now && state_.step % config_.digest_every == 0)
    state_.digest_before = master_.Digest();
  roster_.FreeDeparted();  // those of the previous step, now that it is over
  reduction_.reducer().Begin(state_.step, state_.local, who.size());
  if (secure_) secure_->Begin(who);
  state_.published_result = state_.have_result;
  deadline_.Start(Clock::now());
  roster_.Emit(HubEvent::Kind::kStepPublished);
}

void StepCoordinator::AdvanceIfComplete() {
  // Unmasking waits for the survivors' shares: the run thread's to do.
  if (!fast_.armed || stop_ || roster_.closed() || secure_) return;
  bool any = false;
  if (!context_.AllDelivered(&any)) return;
  // Nobody finished, the run ends, or too few are left: the run thread
  // decides what happens next.
  if (!any || reduction_.reducer().step_refused() ||
      state_.step + state_.steps >= plan_.total_steps())
    return;
  roster_.ReleaseQuarantined();
  std::vector<WorkerSlot*> next = roster_.membership().Participants();
  if (static_cast<int>(next.size()) < config_.min_workers) return;
  const HubWorkTimer timer(metrics_.broadcast_seconds, metrics_.wall_seconds);
  fast_.outcome = CloseStep();
  // The same slots: closing changes no states; it measured the round.
  next = planner_.Attend(roster_.membership().Participants(), secure_ != nullptr);
  BeginStep(next, /*digest_now=*/false);
  // Under the lock: nothing else may change assignments while they go out.
  // The workers' next plan goes out before the master's own optimizer step
  // (it is not on their path), unless someone needs the full state.
  const bool full_state = AnyGetsState(next);
  if (full_state) ApplyToMaster();
  planner_.Publish(next, state_.published_result, reduction_.reducer().segment_count() - 1);
  if (!full_state) ApplyToMaster();
  if (state_.step % config_.digest_every == 0) state_.digest_before = master_.Digest();
  fast_.armed = false;
  fast_.advanced = true;
  fast_.published_ahead = true;
  cv_.notify_all();
}

bool StepCoordinator::AwaitGradients(std::unique_lock<std::mutex>& lock) {
  const auto deadline = deadline_.Deadline(state_.steps, AnyGetsState(round_));
  for (;;) {
    if (fast_.advanced) return true;  // the transport completed it (AdvanceIfComplete)
    if (context_.AllDelivered()) return true;
    if (stop_) return false;
    const auto now = Clock::now();
    if (now >= deadline) {
      for (auto* s : round_)
        if (s->state == WorkerSlot::State::kActive && !s->inbox.complete())
          roster_.LeaveOut(s, Seconds(now - deadline_.published_at()));
      return true;
    }
    cv_.wait_until(lock, deadline);
  }
}

bool StepCoordinator::UnmaskRound(std::unique_lock<std::mutex>& lock) {
  if (!secure_ || !secure_->in_round()) return true;
  const std::string why = secure_->Unmask(lock, cv_, stop_);
  if (why.empty()) return !stop_;
  state_.diverged = "secure aggregation: " + why;
  StopDiverged();
  return false;
}

void StepCoordinator::StopDiverged() {
  spdlog::error("{}", state_.diverged);
  stop_ = true;
  cv_.notify_all();
}

StepCoordinator::StepOutcome StepCoordinator::CompleteStep(bool next_may_follow) {
  std::unique_lock<std::mutex> lock(mu_);
  fast_.armed = next_may_follow;
  const int64_t wait_begin = trace_ ? trace::NowMicros() : 0, waited_for = state_.step;
  const bool in = AwaitGradients(lock);
  if (trace_)
    context_.spans->Add(trace::MakeSpan(trace::SpanKind::kBarrierWait, wait_begin,
                                        trace::NowMicros(), -1, waited_for));
  fast_.armed = false;
  if (fast_.advanced) {
    fast_.advanced = false;
    return fast_.outcome;
  }
  if (!in || !UnmaskRound(lock)) {
    StepOutcome stopped;
    stopped.stopped = true;
    return stopped;
  }
  const HubWorkTimer timer(metrics_.reduce_seconds, metrics_.wall_seconds);
  StepOutcome out = CloseStep();
  if (out.samples > 0) ApplyToMaster();
  return out;
}

StepCoordinator::StepOutcome StepCoordinator::CloseStep() {
  ReduceReadySegments();  // what latecomers held back, now that they are out
  return tally_.Close(reduction_.reducer());
}

void StepCoordinator::ApplyToMaster() {
  const trace::ScopedSpan span(context_.spans, trace::SpanKind::kOptimizer, -1,
                               state_.average_step);
  if (state_.average_local)
    master_.ApplyAverageChange();
  else
    master_.ApplyAverage();
}

std::string StepCoordinator::ParticipantSummary() {
  return Locked(
      [&] { return summary_.Next(roster_.membership(), controller_, metrics_, kListedWorkers); });
}

void StepCoordinator::RequestStop() {
  std::lock_guard<std::mutex> lock(mu_);
  stop_ = true;
  cv_.notify_all();
}

void StepCoordinator::Finish(const std::string& reason, double test_accuracy) {
  std::vector<WorkerSlot*> who;
  int64_t steps = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    roster_.Close();
    steps = state_.step;
    who = roster_.membership().NotGone();
    roster_.Emit(HubEvent::Kind::kRunEnded, -1, reason);
  }
  const Encoded stop = messages_.Stop(reason, steps, test_accuracy);
  for (auto* s : who) s->Send(stop);
}

}  // namespace mt
