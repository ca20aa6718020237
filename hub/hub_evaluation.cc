// The hub's evaluations of the master weights on the test set: at epoch
// ends (the per-epoch summary, early stopping), every --eval-every steps
// and at the end of the run, each one a point of the report's eval_history
// (time to accuracy) and a check against --target-accuracy.
#include <spdlog/spdlog.h>

#include "core/train/evaluate.h"
#include "core/train/recalibrate.h"
#include "core/util/process_stats.h"
#include "hub/hub.h"
#include "hub/monitor/live_status.h"

namespace mt {

bool Hub::EvaluationDue(int64_t steps_done) const {
  if (steps_done <= 0) return false;
  return plan_->EpochEnded(steps_done) ||
         (config_.eval_every > 0 && steps_done % config_.eval_every == 0);
}

void Hub::RecalibrateRunningStats(int64_t step) {
  if (!calibration_) return;
  const trace::ScopedSpan span(TraceSpans(), trace::SpanKind::kRecalibration, -1, step);
  const double cpu_start = ThreadCpuSeconds();
  // 40 batches: layer momentum 0.1 leaves 1.5% of the reset statistics.
  mt::RecalibrateRunningStats(master_->model(), *calibration_, 40, config_.seed ^ step);
  metrics_.eval_seconds += ThreadCpuSeconds() - cpu_start;
  PublishRunningStats();
}

void Hub::PublishRunningStats() {
  std::vector<float> stats(master_->model().RunningStatCount());
  master_->model().GetRunningStats(stats.data());
  coordinator_->PublishRunningStats(std::move(stats));
}

void Hub::Evaluate(int64_t steps_done, bool run_ended) {
  const trace::ScopedSpan span(TraceSpans(), trace::SpanKind::kEvaluation, -1, steps_done);
  RecalibrateRunningStats(steps_done);
  const double cpu_start = ThreadCpuSeconds();
  const EvalResult r = mt::Evaluate(master_->model(), *test_);
  metrics_.eval_seconds += ThreadCpuSeconds() - cpu_start;
  EvalPoint p;
  p.step = steps_done;
  p.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - train_started_).count();
  p.samples = metrics_.samples;
  p.test_accuracy = r.accuracy;
  p.test_loss = r.mean_loss;
  eval_history_.push_back(p);
  live_->OnEvaluation(p);
  if (events_)
    events_->OnEvent({HubEvent::Kind::kEvaluated, p.step, -1, std::to_string(p.test_accuracy), {}});
  const bool epoch_end = plan_->EpochEnded(steps_done);
  // The final evaluation closes the epoch the run ended in; one between
  // epoch ends is only a point on the way.
  if (epoch_end || run_ended)
    RecordEpoch(plan_->EpochsBegun(steps_done), epoch_end, p);
  else
    spdlog::info("step {}: test loss {:.4f}, test accuracy {:.4f} ({:.1f} s)", p.step, p.test_loss,
                 p.test_accuracy, p.seconds);
  CheckTarget(p);
}

void Hub::RecordEpoch(int64_t epoch, bool complete, const EvalPoint& eval) {
  EpochSummary e;
  e.epoch = epoch;
  e.step = eval.step;
  e.complete = complete;
  e.samples = epoch_samples_;
  e.train_loss = epoch_samples_ ? epoch_loss_sum_ / static_cast<double>(epoch_samples_) : 0;
  e.test_loss = eval.test_loss;
  e.test_accuracy = eval.test_accuracy;
  metrics_.epochs.push_back(e);
  epoch_loss_sum_ = 0;
  epoch_samples_ = 0;
  if (events_)
    events_->OnEvent(
        {HubEvent::Kind::kEpochEvaluated, e.step, -1, std::to_string(e.test_accuracy), {}});
  spdlog::info("epoch {} {} at step {}: train loss {:.4f}, test loss {:.4f}, test accuracy {:.4f}",
               epoch, complete ? "done" : "stopped part way", e.step, e.train_loss, e.test_loss,
               e.test_accuracy);
  if (e.test_loss < best_test_loss_) {
    best_test_loss_ = e.test_loss;
    epochs_without_improvement_ = 0;
  } else if (config_.patience > 0 && ++epochs_without_improvement_ >= config_.patience) {
    stop_reason_ = "early stop: test loss has not improved for " +
                   std::to_string(config_.patience) + " epoch(s)";
  }
}

void Hub::CheckTarget(const EvalPoint& eval) {
  if (config_.target_accuracy <= 0 || target_reached_at_.step >= 0) return;
  if (eval.test_accuracy < config_.target_accuracy) return;
  target_reached_at_ = eval;
  spdlog::info("target accuracy {:.4f} reached at step {} after {:.1f} s (test accuracy {:.4f})",
               config_.target_accuracy, eval.step, eval.seconds, eval.test_accuracy);
  if (events_)
    events_->OnEvent(
        {HubEvent::Kind::kTargetReached, eval.step, -1, std::to_string(eval.test_accuracy), {}});
  if (stop_reason_.empty()) stop_reason_ = "target accuracy reached";
}

}  // namespace mt
