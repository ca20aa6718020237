// The hub's hooks in the training loop (core/train/training_loop.h): the
// master weights on the test set when the loop evaluates them (batch norm
// statistics recomputed first), and what the live views, the events and
// the log hear of each step, evaluation, epoch and the target.
#include <spdlog/spdlog.h>

#include "core/train/evaluate.h"
#include "core/train/recalibrate.h"
#include "core/util/process_stats.h"
#include "hub/evaluation/model_health.h"
#include "hub/hub.h"
#include "hub/monitor/live_status.h"

namespace mt {

void Hub::RecalibrateRunningStats(int64_t step) {
  if (!calibration_) return;
  const trace::ScopedSpan span(TraceSpans(), trace::SpanKind::kRecalibration, -1, step);
  const double cpu_start = ThreadCpuSeconds();
  mt::RecalibrateRunningStats(master_->model(), *calibration_, kRecalibrationBatches,
                              config_.seed ^ step);
  metrics_.eval_seconds += ThreadCpuSeconds() - cpu_start;
  PublishRunningStats();
}

void Hub::PublishRunningStats() {
  std::vector<float> stats(master_->model().RunningStatCount());
  master_->model().GetRunningStats(stats.data());
  coordinator_->PublishRunningStats(std::move(stats));
}

EvalResult Hub::Evaluate(int64_t step) {
  const trace::ScopedSpan span(TraceSpans(), trace::SpanKind::kEvaluation, -1, step);
  RecalibrateRunningStats(step);
  const double cpu_start = ThreadCpuSeconds();
  const EvalResult r = mt::Evaluate(master_->model(), *test_);
  metrics_.eval_seconds += ThreadCpuSeconds() - cpu_start;
  return r;
}

bool Hub::StartEvaluation(int64_t step) {
  if (!snapshots_)
    snapshots_ =
        std::make_unique<SnapshotEvaluator>(spec_, *test_, calibration_.get(), config_.seed);
  // The master weights are those of `step` steps until the run thread
  // completes the step in flight (hub/coordinator/step_coordinator.h).
  snapshots_->Start(master_->model(), step);
  return true;
}

std::optional<EvalResult> Hub::TakeEvaluation(bool wait) {
  std::optional<SnapshotEvaluator::Result> r = snapshots_ ? snapshots_->Take(wait) : std::nullopt;
  if (!r) return std::nullopt;
  metrics_.eval_seconds += r->cpu_seconds;
  // Joining workers get the statistics of the last weights evaluated.
  if (!r->running_stats.empty()) coordinator_->PublishRunningStats(std::move(r->running_stats));
  return r->eval;
}

void Hub::OnStep(const StepOutcome& /*outcome*/, const StepSample& sample) {
  metrics_.train_loss.Add(sample.loss_sum, sample.samples);
  RecordLive(exchange_->last(), sample.step);
}

void Hub::OnEvaluated(const EvalPoint& p) {
  live_->OnEvaluation(p);
  if (events_)
    events_->OnEvent({HubEvent::Kind::kEvaluated, p.step, -1, std::to_string(p.test_accuracy), {}});
}

void Hub::OnEpoch(const EpochSummary& e) {
  if (events_)
    events_->OnEvent(
        {HubEvent::Kind::kEpochEvaluated, e.step, -1, std::to_string(e.test_accuracy), {}});
}

void Hub::OnTargetReached(const EvalPoint& p) {
  if (events_)
    events_->OnEvent(
        {HubEvent::Kind::kTargetReached, p.step, -1, std::to_string(p.test_accuracy), {}});
}

std::string Hub::ProgressDetail() { return " |" + coordinator_->ParticipantSummary(); }

void Hub::OnProgress(int64_t step) {
  if (events_) events_->OnEvent({HubEvent::Kind::kProgress, step, -1, {}, {}});
}

void Hub::OnStepsEnded() {
  metrics_.process_seconds =
      ProcessCpuSeconds() - train_start_.process_cpu_seconds - metrics_.eval_seconds;
}

std::string Hub::ResultProblem(double last_test_loss) {
  // Finite weights that a hostile worker (or the learning rate) blew up
  // are no result either: the run fails rather than report success.
  std::string broken =
      health::BrokenModelReason(master_->model(), last_test_loss, test_->NumClasses());
  // So is a model a bias walked to chance with finite weights, or one that
  // lost what it had learned.
  if (broken.empty())
    broken = health::CollapsedModelReason(loop_->eval_history(), test_->NumClasses());
  // A test loss far above the training loss reached is only a warning:
  // honest runs on little data overfit that far too (a 40-step run on 1000
  // samples did), and failing them would be worse than letting a bias
  // that stopped short of chance through.
  if (broken.empty() && config_.data.partition.kind == PartitionSpec::Kind::kIid) {
    const std::string lost =
        LostLearningReason(metrics_.train_loss, last_test_loss, test_->NumClasses());
    if (!lost.empty()) spdlog::warn("{} (or it overfits its training data)", lost);
  }
  if (!broken.empty()) spdlog::error("{}", broken);
  return broken;
}

void Hub::OnRunEnded() {
  spdlog::info("stopping: {}", loop_->stop_reason());
  coordinator_->Finish(loop_->stop_reason(), loop_->last_epoch_accuracy());
}

void Hub::Log(const std::string& line) { spdlog::info("{}", line); }

}  // namespace mt
