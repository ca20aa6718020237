#include "core/train/training_loop.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>

#include "core/util/seconds.h"

namespace mt {
namespace {

std::string Format(const char* format, ...) {
  char buf[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buf, sizeof buf, format, args);
  va_end(args);
  return buf;
}

}  // namespace

const char* ExchangeKindName(ExchangeKind kind) {
  switch (kind) {
    case ExchangeKind::kNone: return "none";
    case ExchangeKind::kEveryStep: return "every step";
    case ExchangeKind::kRounds: return "rounds";
    case ExchangeKind::kRoundsLookAhead: return "rounds with look-ahead";
  }
  return "unknown";
}

TrainingLoop::TrainingLoop(const RunPlan& plan, const LoopSettings& settings,
                           StepExchange& exchange, RunHooks& hooks)
    : plan_(plan), settings_(settings), exchange_(exchange), hooks_(hooks) {}

double TrainingLoop::SecondsSinceStart() const { return Seconds(Clock::now() - started_); }

void TrainingLoop::Run() {
  first_step_ = last_checkpoint_ = exchange_.steps_done();
  started_ = Clock::now();
  progress_ = std::make_unique<ProgressMeter>(settings_.log_every_seconds, plan_.total_steps(),
                                              first_step_);
  while (exchange_.steps_done() < plan_.total_steps() && stop_reason_.empty()) {
    if (!exchange_.Begin()) break;
    // Evaluated while the step is in flight where it is (the workers
    // compute; the weights do not change until its result is in), so the
    // evaluation costs the run no time there.
    const int64_t done = exchange_.steps_done();
    if (exchange_.WeightsCurrent() && EvaluationDue(done)) Evaluate(done, /*run_ended=*/false);
    CollectEvaluation(/*wait=*/false);
    // Patience or the target ended the run: a step not yet under way is
    // not started.
    if (!stop_reason_.empty() && !exchange_.StepInFlight()) break;
    const auto step_started = Clock::now();
    const StepOutcome outcome = exchange_.Complete(stop_reason_.empty());
    if (outcome.stopped) break;
    if (outcome.samples == 0) continue;  // nobody finished: the step runs again
    RecordStep(outcome, 1e3 * Seconds(Clock::now() - step_started));
  }
  CollectEvaluation(/*wait=*/true);
  train_seconds_ = SecondsSinceStart() - stalled_seconds_;
  hooks_.OnStepsEnded();
  const std::string failure = exchange_.Failure();
  if (!failure.empty()) {
    stop_reason_ = failure;
    failed_ = true;
  }
  if (stop_reason_.empty()) stop_reason_ = exchange_.StopReason();
  if (stop_reason_.empty()) stop_reason_ = "training complete";
  // The final weights, unless they were evaluated already; then that
  // evaluation closes the epoch the run ended in, if an epoch end did not.
  const int64_t steps = exchange_.steps_done();
  if (!failed_ && steps > 0) {
    if (eval_history_.empty() || eval_history_.back().step != steps)
      Evaluate(steps, /*run_ended=*/true);
    else if (!plan_.EpochEnded(steps))
      RecordEpoch(plan_.EpochsBegun(steps), false, eval_history_.back(),
                  eval_history_.back().seconds - epoch_started_ - epoch_stalled_);
  }
  if (!failed_) {
    const std::string problem =
        hooks_.ResultProblem(eval_history_.empty() ? -1.0 : eval_history_.back().test_loss);
    if (!problem.empty()) {
      stop_reason_ = problem;
      failed_ = true;
    }
  }
  hooks_.OnRunEnded();
  // Broken weights would only be resumed into the same failure; the last
  // checkpoint before it is the one to go back to.
  if (!failed_ && steps != last_checkpoint_) SaveCheckpoint(steps);
}

bool TrainingLoop::EvaluationDue(int64_t steps_done) const {
  // The weights a run starts from were evaluated by the run that saved them.
  if (steps_done <= first_step_) return false;
  const int64_t last = pending_                ? pending_->step
                       : eval_history_.empty() ? first_step_
                                               : eval_history_.back().step;
  if (last == steps_done) return false;
  // At the first point the weights are current after each multiple of
  // --eval-every: in rounds of local steps that is the round's end, so
  // measuring never cuts a round short (which would add an exchange and
  // change the run it measures).
  return plan_.EpochEnded(steps_done) ||
         (settings_.eval_every > 0 &&
          steps_done / settings_.eval_every > last / settings_.eval_every);
}

void TrainingLoop::Evaluate(int64_t steps_done, bool run_ended) {
  // One at a time, in step order: the last one's result first. It may
  // have reached the target: then nothing more is evaluated before the end.
  CollectEvaluation(/*wait=*/true);
  if (!run_ended && !stop_reason_.empty()) return;
  const bool epoch_end = plan_.EpochEnded(steps_done);
  if (!run_ended && !epoch_end && hooks_.StartEvaluation(steps_done)) {
    EvalPoint p;
    p.step = steps_done;
    p.seconds = SecondsSinceStart();
    p.samples = samples_;
    pending_ = p;
    return;
  }
  const double at = SecondsSinceStart();
  const auto began = Clock::now();
  const EvalResult r = hooks_.Evaluate(steps_done);
  const Clock::duration took = Clock::now() - began;
  // Outside the steps (standalone, or the end) an evaluation pauses
  // training; on the hub it overlaps the step the workers compute.
  const bool in_flight = !run_ended && exchange_.StepInFlight();
  if (in_flight) {
    exchange_.Overlapped(took);
  } else if (!run_ended) {
    stalled_seconds_ += Seconds(took);
    epoch_stalled_ += Seconds(took);
  }
  EvalPoint p;
  p.step = steps_done;
  // When the evaluated weights were current, not when their evaluation
  // ended: the time to a target must not include measuring it.
  p.seconds = at;
  p.samples = samples_;
  p.test_accuracy = r.accuracy;
  p.test_loss = r.mean_loss;
  // The final evaluation closes the epoch the run ended in; one between
  // epoch ends is only a point on the way.
  if (epoch_end || run_ended) {
    eval_history_.push_back(p);
    hooks_.OnEvaluated(p);
    const double train_seconds = at - epoch_started_ - epoch_stalled_;
    epoch_started_ = in_flight ? at : SecondsSinceStart();
    epoch_stalled_ = 0;
    RecordEpoch(plan_.EpochsBegun(steps_done), epoch_end, p, train_seconds);
    CheckTarget(p);
  } else {
    RecordEvaluation(p);
  }
}

void TrainingLoop::CollectEvaluation(bool wait) {
  if (!pending_) return;
  const std::optional<EvalResult> r = hooks_.TakeEvaluation(wait);
  if (!r) return;
  EvalPoint p = *pending_;
  pending_.reset();
  p.test_accuracy = r->accuracy;
  p.test_loss = r->mean_loss;
  RecordEvaluation(p);
}

void TrainingLoop::RecordEvaluation(const EvalPoint& p) {
  eval_history_.push_back(p);
  hooks_.OnEvaluated(p);
  hooks_.Log(Format("step %lld: test loss %.4f, test accuracy %.4f (%.1f s)",
                    static_cast<long long>(p.step), p.test_loss, p.test_accuracy, p.seconds));
  CheckTarget(p);
}

void TrainingLoop::RecordEpoch(int64_t epoch, bool complete, const EvalPoint& eval,
                               double train_seconds) {
  EpochSummary e;
  e.epoch = epoch;
  e.step = eval.step;
  e.complete = complete;
  e.samples = epoch_samples_;
  e.train_loss = epoch_samples_ ? epoch_loss_sum_ / static_cast<double>(epoch_samples_) : 0;
  e.test_loss = eval.test_loss;
  e.test_accuracy = eval.test_accuracy;
  e.train_seconds = std::max(0.0, train_seconds);
  epochs_.push_back(e);
  epoch_loss_sum_ = 0;
  epoch_samples_ = 0;
  hooks_.OnEpoch(e);
  hooks_.Log(Format(
      "epoch %lld %s at step %lld: train loss %.4f, test loss %.4f, test accuracy %.4f, %.0f "
      "samples/s",
      static_cast<long long>(epoch), complete ? "done" : "stopped part way",
      static_cast<long long>(e.step), e.train_loss, e.test_loss, e.test_accuracy,
      static_cast<double>(e.samples) / std::max(e.train_seconds, 1e-9)));
  if (e.test_loss < best_test_loss_) {
    best_test_loss_ = e.test_loss;
    epochs_without_improvement_ = 0;
  } else if (settings_.patience > 0 && ++epochs_without_improvement_ >= settings_.patience &&
             stop_reason_.empty()) {
    stop_reason_ = "early stop: test loss has not improved for " +
                   std::to_string(settings_.patience) + " epoch(s)";
  }
}

void TrainingLoop::CheckTarget(const EvalPoint& eval) {
  if (settings_.target_accuracy <= 0 || target_reached_at_.step >= 0) return;
  if (eval.test_accuracy < settings_.target_accuracy) return;
  target_reached_at_ = eval;
  hooks_.Log(Format("target accuracy %.4f reached at step %lld after %.1f s (test accuracy %.4f)",
                    settings_.target_accuracy, static_cast<long long>(eval.step), eval.seconds,
                    eval.test_accuracy));
  hooks_.OnTargetReached(eval);
  if (stop_reason_.empty()) stop_reason_ = "target accuracy reached";
}

void TrainingLoop::RecordStep(const StepOutcome& outcome, double wall_ms) {
  const int64_t step = exchange_.steps_done();
  samples_ += outcome.samples;
  epoch_loss_sum_ += outcome.loss_sum;
  epoch_samples_ += outcome.samples;
  last_step_loss_ = outcome.loss_sum / static_cast<double>(outcome.samples);
  StepSample sample;
  sample.step = step;
  sample.steps = std::max<int64_t>(1, outcome.steps);
  sample.seconds = SecondsSinceStart();
  sample.loss_sum = outcome.loss_sum;
  sample.samples = outcome.samples;
  sample.wall_ms = wall_ms;
  if (hooks_.WantsStepHistory())
    if (StepPoint* point = history_.Add(sample)) hooks_.OnHistoryPoint(*point);
  hooks_.OnStep(outcome, sample);
  if (progress_->Step(step, outcome.samples)) {
    hooks_.Log(Format("step %lld/%lld epoch %lld/%lld loss %.4f %.0f samples/s ETA %s",
                      static_cast<long long>(step), static_cast<long long>(plan_.total_steps()),
                      static_cast<long long>(plan_.EpochsBegun(step)),
                      static_cast<long long>(plan_.epochs()),
                      epoch_loss_sum_ / static_cast<double>(epoch_samples_),
                      progress_->samples_per_second(),
                      FormatDuration(progress_->eta_seconds()).c_str()) +
               hooks_.ProgressDetail());
    hooks_.OnProgress(step);
  }
  if (plan_.CheckpointDue(step, settings_.checkpoint_every)) SaveCheckpoint(step);
}

void TrainingLoop::SaveCheckpoint(int64_t step) {
  hooks_.SaveCheckpoint(step);
  last_checkpoint_ = step;
}

void TrainingLoop::FillSummary(RunSummary& s) const {
  s.steps = exchange_.steps_done();
  s.samples = samples_;
  s.train_seconds = train_seconds_;
  s.stopped_early = s.steps < plan_.total_steps();
  s.stop_reason = stop_reason_;
  s.last_step_loss = last_step_loss_;
  s.epochs = epochs_;
  s.eval_history = eval_history_;
  if (settings_.target_accuracy > 0) s.target_accuracy = settings_.target_accuracy;
  if (target_reached_at_.step >= 0) {
    s.seconds_to_target = target_reached_at_.seconds;
    s.step_to_target = target_reached_at_.step;
  }
  if (!epochs_.empty()) {
    s.test_accuracy = epochs_.back().test_accuracy;
    s.test_loss = epochs_.back().test_loss;
    s.train_loss = epochs_.back().train_loss;
  }
  if (hooks_.WantsStepHistory()) s.details["history"] = history_.ToJson();
}

}  // namespace mt
