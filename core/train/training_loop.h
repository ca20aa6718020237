// The one training loop of mt: mtworker --standalone and mthub both run
// it, each with its own exchange (core/train/step_exchange.h) and hooks.
// Written once here: evaluation at epoch ends, every --eval-every steps
// and at the end; early stopping (--patience); --target-accuracy and the
// time and steps to it; checkpoints (every --checkpoint-every steps, epoch
// ends, the end); progress lines; the step history; the summary.
//
// Evaluations happen after Begin, when the exchange says the weights are
// current: on the hub that is while the workers compute the next step, so
// its bookkeeping overlaps their compute (hub/coordinator/step_coordinator.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/train/evaluate.h"
#include "core/train/progress.h"
#include "core/train/run_plan.h"
#include "core/train/run_summary.h"
#include "core/train/step_exchange.h"
#include "core/train/step_history.h"

namespace mt {

// What the loop does when: part of the run's settings (RunSettings,
// core/train/run_settings.h, extends it).
struct LoopSettings {
  int64_t eval_every = 0;        // steps; 0: epoch ends only
  int64_t patience = 0;          // epochs without a better test loss; 0: never stop
  double target_accuracy = 0;    // 0: none
  int64_t checkpoint_every = 0;  // steps; 0: epoch ends and the end only
  double log_every_seconds = 2;
};

// The process around the loop: what it evaluates, saves and tells.
class RunHooks {
 public:
  virtual ~RunHooks() = default;
  // The weights of `step` steps on the test set.
  virtual EvalResult Evaluate(int64_t step) = 0;
  // An evaluation between epoch ends in the background, if the process
  // can (the hub: hub/evaluation/snapshot_evaluator.h): the weights of `step` steps
  // are copied now and evaluated while the steps go on; the loop collects
  // the result from TakeEvaluation. False: the loop calls Evaluate.
  virtual bool StartEvaluation(int64_t /*step*/) { return false; }
  // The started evaluation's result once done (`wait`: waits for it);
  // nullopt while it runs.
  virtual std::optional<EvalResult> TakeEvaluation(bool /*wait*/) { return std::nullopt; }
  virtual void SaveCheckpoint(int64_t step) = 0;
  // After each applied step (not for steps that run again).
  virtual void OnStep(const StepOutcome& /*outcome*/, const StepSample& /*sample*/) {}
  // A point of the step history closed: the caller may add its batches.
  virtual void OnHistoryPoint(StepPoint& /*point*/) {}
  virtual void OnEvaluated(const EvalPoint& /*point*/) {}
  virtual void OnEpoch(const EpochSummary& /*epoch*/) {}
  virtual void OnTargetReached(const EvalPoint& /*point*/) {}
  // Appended to a progress line, and told that one was written.
  virtual std::string ProgressDetail() { return {}; }
  virtual void OnProgress(int64_t /*step*/) {}
  // The steps are over; the final evaluation comes next.
  virtual void OnStepsEnded() {}
  // After the final evaluation: why the trained model is no result ("",
  // it is one), from the last test loss (-1: none).
  virtual std::string ResultProblem(double /*last_test_loss*/) { return {}; }
  // The run's end is known (stop reason, failure), before the last checkpoint.
  virtual void OnRunEnded() {}
  // A line for the run's log (core has no logger of its own).
  virtual void Log(const std::string& /*line*/) {}
  // Whether the loop keeps the per-step history for the summary; false
  // where the process keeps its own (the hub's live views, with bytes and
  // each worker's batch, behind their lock).
  virtual bool WantsStepHistory() const { return true; }
};

class TrainingLoop {
 public:
  TrainingLoop(const RunPlan& plan, const LoopSettings& settings, StepExchange& exchange,
               RunHooks& hooks);

  // Trains from the exchange's steps_done() to the plan's end, the
  // target, patience running out, a stop or a failure; evaluates the final
  // weights and checkpoints them unless the run failed.
  void Run();
  // Ends a run that had nothing to train (already complete, or stopped
  // while waiting for workers).
  void EndWithoutTraining(const std::string& reason) { stop_reason_ = reason; }

  bool failed() const { return failed_; }
  const std::string& stop_reason() const { return stop_reason_; }
  const std::vector<EpochSummary>& epochs() const { return epochs_; }
  const std::vector<EvalPoint>& eval_history() const { return eval_history_; }
  int64_t samples() const { return samples_; }
  // Wall time of the steps, evaluations that stalled them excluded.
  double train_seconds() const { return train_seconds_; }
  // The accuracy of the last epoch evaluated; -1: none.
  double last_epoch_accuracy() const {
    return epochs_.empty() ? -1.0 : epochs_.back().test_accuracy;
  }

  // The summary's run fields: steps, samples, times, stop, epochs,
  // evaluations, target, losses and (if recorded) the history.
  void FillSummary(RunSummary& summary) const;

 private:
  using Clock = std::chrono::steady_clock;
  bool EvaluationDue(int64_t steps_done) const;
  // `run_ended`: the final evaluation, which closes the epoch it is in.
  void Evaluate(int64_t steps_done, bool run_ended);
  // The background evaluation's point, if it is done (`wait`: once it is):
  // recorded as of when its weights were copied.
  void CollectEvaluation(bool wait);
  // An evaluation's point: history, hooks, the log line, the target.
  void RecordEvaluation(const EvalPoint& point);
  // `train_seconds`: the epoch's training time, stalling evaluations excluded.
  void RecordEpoch(int64_t epoch, bool complete, const EvalPoint& eval, double train_seconds);
  void CheckTarget(const EvalPoint& eval);
  void RecordStep(const StepOutcome& outcome, double wall_ms);
  void SaveCheckpoint(int64_t step);
  double SecondsSinceStart() const;

  const RunPlan& plan_;
  LoopSettings settings_;
  StepExchange& exchange_;
  RunHooks& hooks_;

  int64_t first_step_ = 0;
  int64_t last_checkpoint_ = -1;
  Clock::time_point started_{};
  double stalled_seconds_ = 0;  // evaluations that paused the steps
  double train_seconds_ = 0;
  std::unique_ptr<ProgressMeter> progress_;
  StepHistory history_;

  int64_t samples_ = 0;
  double last_step_loss_ = -1;
  double epoch_loss_sum_ = 0;
  int64_t epoch_samples_ = 0;
  double epoch_started_ = 0, epoch_stalled_ = 0;  // seconds since start
  std::vector<EpochSummary> epochs_;
  std::vector<EvalPoint> eval_history_;
  std::optional<EvalPoint> pending_;  // started in the background, result not yet in
  double best_test_loss_ = 1e300;
  int64_t epochs_without_improvement_ = 0;
  EvalPoint target_reached_at_{-1};  // step -1 until --target-accuracy is reached
  std::string stop_reason_;
  bool failed_ = false;
};

}  // namespace mt
