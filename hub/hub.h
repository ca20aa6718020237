// The hub: a training run served to workers. It owns the master model, the
// step coordinator (hub/coordinator/step_coordinator.h) and the transport that feeds it
// (hub/grpc/), and runs the training loop (core/train/training_loop.h)
// over the coordinator's steps (hub/coordinator/hub_exchange.h), as its hooks: what
// the loop evaluates and saves, and what the live views and events hear.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/data/dataset.h"
#include "core/train/run_summary.h"
#include "core/train/training_loop.h"
#include "hub/aggregation/master_model.h"
#include "hub/coordinator/hub_exchange.h"
#include "hub/coordinator/step_coordinator.h"
#include "hub/evaluation/snapshot_evaluator.h"
#include "hub/hub_config.h"
#include "hub/monitor/status_snapshot.h"
#include "hub/report/checkpoint_log.h"
#include "hub/report/hub_events.h"
#include "hub/report/hub_trace.h"
#include "hub/report/run_metrics.h"
#include "hub/transport/transport.h"
#include "model.pb.h"

namespace mt {

class HubServer;
class LiveStatus;
class DashboardServer;

class Hub final : private RunHooks {
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
  // --partition: draws each worker's share of the training set.
  void SplitAmongWorkers(const DataOptions& read);
  // Without --global-batch: once the first workers are ready, the global
  // batch follows their own timings (BatchController::FollowingTotal), and
  // a learning rate that was the default follows the batch.
  void FollowDevices();
  // --dp-clip: the noise for --dp-epsilon over the run's planned rounds
  // (dp::TargetError when it cannot be met), the exchange uncompressed.
  void PlanPrivacy();
  // hub/hub_evaluation.cc: the training loop's hooks (core/train/
  // training_loop.h) that evaluate the master weights and tell the live
  // views, the events and the log what the run does.
  EvalResult Evaluate(int64_t step) override;
  bool StartEvaluation(int64_t step) override;
  std::optional<EvalResult> TakeEvaluation(bool wait) override;
  void OnStep(const StepOutcome& outcome, const StepSample& sample) override;
  void OnEvaluated(const EvalPoint& point) override;
  void OnEpoch(const EpochSummary& epoch) override;
  void OnTargetReached(const EvalPoint& point) override;
  std::string ProgressDetail() override;
  void OnProgress(int64_t step) override;
  void OnStepsEnded() override;
  std::string ResultProblem(double last_test_loss) override;
  void OnRunEnded() override;
  void Log(const std::string& line) override;
  // LiveStatus keeps the hub's history, with bytes and batches.
  bool WantsStepHistory() const override { return false; }
  // hub/hub_live.cc: the live views. The run as configured, each
  // step for LiveStatus, and the HTTP server (--http-port) in Start.
  RunInfo LiveRunInfo() const;
  void RecordLive(const StepCoordinator::StepOutcome& outcome, int64_t step);
  void StartDashboard();
  void SaveCheckpoint(int64_t step) override;
  // The final model where the run keeps it (run_model.h); logged, not fatal.
  void SaveFinal();
  // Batch norm statistics for the master weights (core/train/recalibrate.h),
  // before they are evaluated, checkpointed or exported.
  void RecalibrateRunningStats(int64_t step);
  // Hands the master's running statistics to the coordinator for Joins.
  void PublishRunningStats();
  void WriteReport();
  // Where the hub's spans go (--trace); null when not tracing.
  trace::SpanSink* TraceSpans() const { return trace_ ? trace_->hub() : nullptr; }

  HubConfig config_;
  proto::ModelSpec spec_;
  std::unique_ptr<Dataset> test_;
  std::unique_ptr<Dataset> calibration_;  // the training set, for models with batch norm
  // --eval-every between epoch ends, on a copy of the weights (made in Run).
  std::unique_ptr<SnapshotEvaluator> snapshots_;
  std::unique_ptr<RunPlan> plan_;  // once the training set's size is known
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

  // The run's loop and its steps, made in Run once the workers are in.
  std::unique_ptr<HubExchange> exchange_;
  std::unique_ptr<TrainingLoop> loop_;

  // What the run learns about itself on the way, for the report and the log.
  struct RunRecord {
    int64_t resumed_from = -1;  // the checkpoint's step when resumed
    int64_t default_batch = 0;  // the global batch before FollowDevices changed it; 0: unchanged
    std::vector<std::string> model_warnings;  // --model's, as loaded (RunModel::warnings)
    std::string model_label;                  // the final model's file is named after it
    std::vector<std::string> class_names;     // an image folder's, else empty
    uint64_t skipped_images = 0;              // --skip-bad-images: files left out
    std::string augment;                      // of training samples (Augmentation::ToString)
    // --partition: each share's samples per class (the report's histograms).
    std::vector<std::vector<uint32_t>> partition_counts;
    std::string final_model_path;  // "" until written
    std::string tls_fingerprint;   // of the certificate the hub presents; "" in plaintext
    CheckpointLog checkpoints;     // written so far, for the log
  };
  RunRecord record_;
  // When the step loop began, in wall time (the live views' seconds) and
  // in the process's CPU seconds (the report's hub_process_share).
  struct TrainStart {
    std::chrono::steady_clock::time_point wall;
    double process_cpu_seconds = 0;
  };
  TrainStart train_start_;
};

}  // namespace mt
