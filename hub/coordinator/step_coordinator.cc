// The coordinator's step cycle, in the order it happens: publish, the
// transport's fast path, the barrier, close and apply.
#include "hub/coordinator/step_coordinator.h"

#include <spdlog/spdlog.h>

#include "core/util/process_stats.h"
#include "core/util/seconds.h"
#include "hub/aggregation/sketch_seed.h"
#include "hub/policy/plausible_speed.h"
#include "hub/report/hub_trace.h"

namespace mt {
namespace {

std::vector<SegmentRange> Ranges(const std::vector<wire::Segment>& segments) {
  std::vector<SegmentRange> out;
  for (const wire::Segment& s : segments) out.push_back({s.begin, s.end});
  return out;
}

bool AnyGetsState(const std::vector<WorkerSlot*>& who) {
  for (const WorkerSlot* s : who)
    if (s->full_state.this_step) return true;
  return false;
}

AdmissionRules AdmissionRulesOf(const HubConfig& config, const RunPlan& plan,
                                const MasterModel& master) {
  AdmissionRules rules;
  rules.token = config.token;
  rules.global_batch = plan.batch();
  rules.fixed_bytes = master.worker_fixed_bytes();
  rules.bytes_per_sample = master.worker_bytes_per_sample();
  rules.param_count = master.param_count();
  rules.segments = master.segments();
  rules.matrices = master.param_matrices();
  rules.max_workers = config.max_workers_or_default();
  return rules;
}

AggregatorOptions AggregationOf(const HubConfig& config) {
  AggregatorOptions options;
  options.mode = config.aggregate;
  options.clip_factor = config.clip_factor;
  // Where the workers' data differ by design, honest residuals keep their
  // classes' direction and honest contributions point apart. The
  // persistence watch stays on: its rule is relative to the other workers
  // (3 times their median), which honest workers keeping their own classes
  // did not approach (at most 1.44, Dirichlet 0.1 and 0.5). The alignment
  // watch is off there: even with data_differ (refused only 0.2 below the
  // workers' median cosine) it refused an honest worker of three
  // (Dirichlet 0.5, seed 3: -0.47 against -0.25 and -0.27).
  const bool differ = config.data.partition.kind != PartitionSpec::Kind::kIid;
  options.data_differ = differ;
  options.refuse_misaligned = !differ;
  options.sketch_seed =
      SketchSeedOf(config.sketch_seed);  // each hub its own, unless a test names it
  return options;
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
      roster_(AdmissionRulesOf(config, plan, master), controller_, attendance_, messages_, metrics,
              events, state_, round_),
      reducer_(Ranges(master.segments()), AggregationOf(config)),
      dp_(config.dp, config.workers) {
  controller_.SetHintFloor(FastestPlausibleMsPerSample(spec, master.model()));
  messages_.SetPrivacy(dp_.ForWorkers());
  if (config.secure_aggregation) {
    secure_ = std::make_unique<SecureRounds>(config.workers, master.segments().back().begin,
                                             master.param_count());
    messages_.SetSecureAggregation(secure_->settings());
  }
}

void StepCoordinator::StartAt(int64_t step) {
  std::lock_guard<std::mutex> lock(mu_);
  state_.step = step;
  dp_.CountEarlierRounds(step);  // --dp-clip: the privacy spent before the checkpoint
}

void StepCoordinator::PublishRunningStats(std::vector<float> stats) {
  std::lock_guard<std::mutex> lock(mu_);
  messages_.SetRunningStats(std::move(stats));
}

void StepCoordinator::SetPartition(std::vector<ClassShare> shares) {
  const std::lock_guard<std::mutex> lock(mu_);
  messages_.SetPartition(std::move(shares));
}

bool StepCoordinator::WaitForWorkers() {
  std::unique_lock<std::mutex> lock(mu_);
  return WaitForParticipants(lock, config_.workers, [&](int n) {
    spdlog::info("waiting for workers: {} of {} ready", n, config_.workers);
  });
}

int StepCoordinator::FollowingBatch(int per_worker, std::string* timings) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<BatchController::Member> members;
  for (auto* s : roster_.membership().Participants()) {
    members.push_back({s->id, s->max_batch, 1.0});
    if (timings)
      *timings += fmt::format("{}worker {} {:.3f} ms", timings->empty() ? "" : ", ", s->id,
                              controller_.hint(s->id));
  }
  return controller_.FollowingTotal(per_worker, members);
}

void StepCoordinator::SetGlobalBatch(int64_t batch) {
  std::lock_guard<std::mutex> lock(mu_);
  plan_ = plan_.WithBatch(batch);
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
    if (!WaitForMinWorkers(lock)) return false;
  }
  who = Attend(std::move(who));
  BeginStep(who);
  lock.unlock();
  // Sending happens outside the lock: slots never move, and only this
  // thread changes assignments until CompleteStep arms the fast path.
  const double cpu = ThreadCpuSeconds();
  const auto wall = Clock::now();
  Broadcast(who, state_.published_result);
  metrics_.broadcast_seconds += ThreadCpuSeconds() - cpu;
  metrics_.wall_seconds += Seconds(Clock::now() - wall);
  return true;
}

std::vector<WorkerSlot*> StepCoordinator::Attend(std::vector<WorkerSlot*> present) {
  // With --partition each worker's share would go untrained while it sits
  // out; fixed shares are the user's own choice.
  if (controller_.policy() != BatchPolicy::kBalanced ||
      config_.data.partition.kind != PartitionSpec::Kind::kIid || secure_)
    return present;
  std::vector<BatchController::Member> members;
  for (const WorkerSlot* s : present) members.push_back({s->id, s->max_batch, 1.0});
  const int total = plan_.BatchAt(state_.step);
  const int steps = static_cast<int>(RoundLength());
  const int min_batch = exchange_.sync.local() ? BatchController::kMinLocalBatch : 1;
  Attendance::Changes changes;
  const std::vector<BatchController::Member> taking = attendance_.Choose(
      members, config_.min_workers,
      [&](const std::vector<BatchController::Member>& m) {
        return controller_.PredictStepMs(total, m, steps, min_batch);
      },
      &changes);
  for (int id : changes.set_aside) roster_.SetAside(roster_.membership().Find(id));
  for (int id : changes.brought_back) roster_.BringBack(roster_.membership().Find(id));
  for (int id : changes.remeasure) controller_.Forget(id);
  std::vector<WorkerSlot*> who;
  for (const BatchController::Member& m : taking)
    who.push_back(roster_.membership().Find(m.worker));
  return who;
}

void StepCoordinator::BeginStep(const std::vector<WorkerSlot*>& who, bool digest_now) {
  exchange_.compression.AtStep(state_.step);
  state_.steps = RoundLength();
  state_.local = exchange_.sync.local();
  Assign(who);
  // Decided under the lock, so a stream that breaks meanwhile cannot be
  // brought back to life by the broadcast.
  for (auto* s : who) {
    s->full_state.this_step =
        s->state == WorkerSlot::State::kWaiting || s->full_state.next_step || !state_.have_result;
    if (s->full_state.next_step) ++s->stats.resyncs;
    s->full_state.next_step = false;
    s->state = WorkerSlot::State::kActive;
  }
  // Workers send a digest only every digest_every steps; hash only then.
  if (digest_now && state_.step % config_.digest_every == 0)
    state_.digest_before = master_.Digest();
  round_ = who;
  roster_.FreeDeparted();  // those of the previous step, now that it is over
  reducer_.Begin(state_.step, state_.local, who.size());
  BeginSecureRound(who);
  state_.published_result = state_.have_result;
  deadline_.Start(Clock::now());
  roster_.Emit(HubEvent::Kind::kStepPublished);
}

void StepCoordinator::AdvanceIfComplete() {
  // Unmasking waits for the survivors' shares: the run thread's to do.
  if (!fast_.armed || stop_ || roster_.closed() || secure_) return;
  bool any = false;
  for (auto* s : round_) {
    if (s->state == WorkerSlot::State::kGone) continue;
    if (!s->inbox.complete()) return;
    any = true;
  }
  // Nobody finished, the run ends, or too few are left: the run thread
  // decides what happens next.
  if (!any || reducer_.step_refused() || state_.step + state_.steps >= plan_.total_steps()) return;
  roster_.ReleaseQuarantined();
  std::vector<WorkerSlot*> next = roster_.membership().Participants();
  if (static_cast<int>(next.size()) < config_.min_workers) return;
  const double cpu = ThreadCpuSeconds();
  const auto wall = Clock::now();
  fast_.outcome = CloseStep();
  // The same slots: closing changes no states; it measured the round.
  next = Attend(roster_.membership().Participants());
  BeginStep(next, /*digest_now=*/false);
  // Under the lock: nothing else may change assignments while they go out.
  // The workers' next plan goes out before the master's own optimizer step
  // (it is not on their path), unless someone needs the full state.
  const bool full_state = AnyGetsState(next);
  if (full_state) ApplyToMaster();
  Broadcast(next, state_.published_result);
  if (!full_state) ApplyToMaster();
  if (state_.step % config_.digest_every == 0) state_.digest_before = master_.Digest();
  metrics_.broadcast_seconds += ThreadCpuSeconds() - cpu;
  metrics_.wall_seconds += Seconds(Clock::now() - wall);
  fast_.armed = false;
  fast_.advanced = true;
  fast_.published_ahead = true;
  cv_.notify_all();
}

bool StepCoordinator::AwaitGradients(std::unique_lock<std::mutex>& lock) {
  const auto deadline = deadline_.Deadline(state_.steps, AnyGetsState(round_));
  for (;;) {
    if (fast_.advanced) return true;  // the transport completed it (AdvanceIfComplete)
    bool all = true;
    for (auto* s : round_)
      all = all && (s->state == WorkerSlot::State::kGone || s->inbox.complete());
    if (all) return true;
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

StepCoordinator::StepOutcome StepCoordinator::CompleteStep(bool next_may_follow) {
  std::unique_lock<std::mutex> lock(mu_);
  fast_.armed = next_may_follow;
  const int64_t wait_begin = trace_ ? trace::NowMicros() : 0, waited_for = state_.step;
  const bool in = AwaitGradients(lock);
  if (trace_)
    spans()->Add(trace::MakeSpan(trace::SpanKind::kBarrierWait, wait_begin, trace::NowMicros(), -1,
                                 waited_for));
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
  if (reducer_.step_refused()) {
    // Nothing of it is applied; everyone starts it again from the master
    // weights (the segments sent so far are discarded with the full state).
    reducer_.ClearRefused();
    state_.have_result = false;
    ++metrics_.steps_refused;
    spdlog::warn("step {} is not applied: a contribution was refused; it runs again",
                 state_.step + 1);
    return StepOutcome{};
  }
  StepOutcome out = Tally();
  if (out.samples == 0) {
    // Everyone dropped out of this step: run it again. Segments averaged
    // before that went only to workers that now get the full state; the
    // master has applied nothing.
    state_.have_result = false;
    return out;
  }
  state_.Close(out.samples, out.loss_sum);
  metrics_.samples += out.samples;
  out.gradient_bytes_in = metrics_.gradient_bytes_in;
  out.result_bytes_out = metrics_.result_bytes_out.load();
  out.steps = state_.steps;
  ObserveRound();
  roster_.Emit(HubEvent::Kind::kStepDone);
  return out;
}

void StepCoordinator::ApplyToMaster() {
  const trace::ScopedSpan span(spans(), trace::SpanKind::kOptimizer, -1, state_.average_step);
  if (state_.average_local)
    master_.ApplyAverageChange();
  else
    master_.ApplyAverage();
}

void StepCoordinator::RequestStop() {
  std::lock_guard<std::mutex> lock(mu_);
  stop_ = true;
  cv_.notify_all();
}

bool StepCoordinator::stop_requested() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stop_;
}

int64_t StepCoordinator::steps_done() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_.step;
}

std::string StepCoordinator::diverged() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_.diverged;
}

int StepCoordinator::sync_every() const {
  std::lock_guard<std::mutex> lock(mu_);
  return exchange_.sync.steps();
}

Compression StepCoordinator::compression() const {
  std::lock_guard<std::mutex> lock(mu_);
  return exchange_.compression.current();
}

std::vector<float> StepCoordinator::MasterWeights() const {
  std::lock_guard<std::mutex> lock(mu_);
  return master_.Weights();
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
