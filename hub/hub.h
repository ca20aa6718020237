// The hub: a training run served to workers. It owns the master model, the
// step coordinator (hub/step_coordinator.h) and the transport that feeds it
// (hub/grpc/), and runs the schedule around the steps: evaluation at epoch
// ends, early stopping, checkpoints, progress and the report.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/data/dataset.h"
#include "core/train/progress.h"
#include "core/train/run_summary.h"
#include "hub/hub_config.h"
#include "hub/hub_events.h"
#include "hub/hub_trace.h"
#include "hub/master_model.h"
#include "hub/monitor/status_snapshot.h"
#include "hub/run_metrics.h"
#include "hub/step_coordinator.h"
#include "hub/transport.h"
#include "model.pb.h"

namespace mt {

class HubServer;
class LiveStatus;
class DashboardServer;

class Hub {
 public:
  // Loads the model and the datasets; throws with a clear message on bad
  // configuration. `events` (may be null) sees everything the run does.
  explicit Hub(HubConfig config, HubEventSink* events = nullptr);
  ~Hub();

  // Binds and starts serving; throws if the address cannot be bound.
  void Start();
  int port() const;
  // Waits for workers, trains, says goodbye, writes the report. Returns the
  // process exit code.
  int Run();
  // Ends the run at the next step boundary (thread-safe).
  void RequestStop();

  // The master weights (for tests).
  std::vector<float> Weights() const;
  int64_t steps_done() const;

 private:
  void ResumeFromCheckpoint();
  // hub/hub_evaluation.cc: the master weights on the test set at epoch ends,
  // every --eval-every steps and at the end; early stopping and the target.
  bool EvaluationDue(int64_t steps_done) const;
  void Evaluate(int64_t steps_done, bool run_ended);
  // The epoch (1-based) that ended, or that the run ended inside (complete
  // false), summarised with its evaluation.
  void RecordEpoch(int64_t epoch, bool complete, const EvalPoint& eval);
  void CheckTarget(const EvalPoint& eval);
  void RecordStep(const StepCoordinator::StepOutcome& outcome);
  // hub/monitor/hub_live.cc: the live views. The run as configured, each
  // step for LiveStatus, and the HTTP server (--http-port) in Start.
  RunInfo LiveRunInfo() const;
  void RecordLive(const StepCoordinator::StepOutcome& outcome, int64_t step);
  void StartDashboard();
  void SaveCheckpoint();
  // The final model where the run keeps it (run_model.h); logged, not fatal.
  void SaveFinal();
  // Batch norm statistics for the master weights (core/train/recalibrate.h),
  // before they are evaluated, checkpointed or exported.
  void RecalibrateRunningStats(int64_t step);
  // Hands the master's running statistics to the coordinator for Joins.
  void PublishRunningStats();
  void WriteReport(double train_seconds);
  // Where the hub's spans go (--trace); null when not tracing.
  trace::SpanSink* TraceSpans() const { return trace_ ? trace_->hub() : nullptr; }

  HubConfig config_;
  proto::ModelSpec spec_;
  std::unique_ptr<Dataset> test_;
  std::unique_ptr<Dataset> calibration_;  // the training set, for models with batch norm
  std::unique_ptr<RunPlan> plan_;         // once the training set's size is known
  std::unique_ptr<MasterModel> master_;
  RunMetrics metrics_;
  HubEventSink* events_;
  // Declared before what emits into it, so it outlives the server's last
  // stream closing.
  std::unique_ptr<HubEventSink> event_file_;
  // What the live views show (hub/monitor/live_status.h); in the event
  // chain too, so declared with it.
  std::unique_ptr<LiveStatus> live_;
  // --trace: outlives the coordinator and the server, which record into it;
  // written at the end of Run, or when destroyed after an error.
  std::unique_ptr<HubTrace> trace_;
  std::unique_ptr<MessageEncoder> encoder_;
  std::unique_ptr<StepCoordinator> coordinator_;
  std::unique_ptr<HubServer> server_;  // shut down first, after the dashboard
  // Last: it reads the coordinator and live_, so it stops before they go.
  std::unique_ptr<DashboardServer> dashboard_;

  int64_t resumed_from_ = -1;  // the checkpoint's step when resumed
  double epoch_loss_sum_ = 0;
  int64_t epoch_samples_ = 0;
  double best_test_loss_ = 1e300;
  int64_t epochs_without_improvement_ = 0;
  std::string stop_reason_;
  std::string final_model_path_;  // "" until written
  std::string tls_fingerprint_;   // of the certificate the hub presents; "" in plaintext
  double last_loss_ = 0;
  std::chrono::steady_clock::time_point train_started_;
  std::vector<EvalPoint> eval_history_;
  EvalPoint target_reached_at_{-1};  // step -1 until --target-accuracy is reached
  std::unique_ptr<ProgressMeter> progress_;
};

}  // namespace mt
