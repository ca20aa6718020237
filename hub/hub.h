// The hub: registry of workers, the step barrier, the weighted average of
// their gradients, the master copy of weights and optimizer state, epoch
// evaluation, checkpoints and the report. The gRPC service (hub_service.h)
// only forwards calls here.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/data/dataset.h"
#include "core/model/model.h"
#include "core/optim/optimizer.h"
#include "hub.grpc.pb.h"
#include "hub/batch_controller.h"
#include "hub/hub_config.h"
#include "hub/worker_slot.h"
#include "kernels/cpu/cpu_backend.h"
#include "model.pb.h"

namespace mt {

class HubService;

struct EpochRecord {
  int64_t epoch = 0;
  int64_t step = 0;
  double train_loss = 0;
  double test_loss = 0;
  double test_accuracy = 0;
};

class Hub {
 public:
  // Loads the model and the datasets; throws with a clear message on bad
  // configuration.
  explicit Hub(HubConfig config);
  ~Hub();

  // Binds and starts serving; throws if the address cannot be bound.
  void Start();
  int port() const { return port_; }
  // Waits for workers, trains, says goodbye, writes the report. Returns the
  // process exit code.
  int Run();
  // Ends the run at the next step boundary (thread-safe).
  void RequestStop();

  // The master weights (for tests).
  std::vector<float> Weights() const;
  int64_t steps_done() const { return step_; }

  grpc::Status Join(const proto::JoinRequest& request, proto::JoinReply* reply, const std::string& peer);
  // The Train stream's side (hub/train_stream.h): a new stream for a call,
  // its first message, each later one, and its end.
  TrainStream* NewTrainStream(const std::string& peer);
  grpc::Status OpenTrainStream(const proto::WorkerMessage& first, TrainStream* stream, int* worker_id);
  grpc::Status OnTrainMessage(int worker_id, const proto::WorkerMessage& message);
  void CloseTrainStream(int worker_id, const grpc::Status& why);
  grpc::Status Leave(const proto::LeaveRequest& request);

 private:
  using Clock = std::chrono::steady_clock;

  bool StopWanted() const;
  bool WaitForWorkers(std::unique_lock<std::mutex>& lock);
  // Below --min-workers the hub waits rather than training on; false when
  // stopped while waiting.
  bool WaitForMinWorkers(std::unique_lock<std::mutex>& lock);
  std::vector<WorkerSlot*> Participants();
  void ResumeFromCheckpoint();
  void Assign(const std::vector<WorkerSlot*>& who);
  double StepDeadlineSeconds(const std::vector<WorkerSlot*>& who) const;
  // The step goes on without a worker that missed its deadline.
  void LeaveOut(WorkerSlot* slot, double waited_seconds);
  void Broadcast(const std::vector<WorkerSlot*>& who, bool have_result);
  void SendState(WorkerSlot* slot);
  bool WaitForGradients(std::unique_lock<std::mutex>& lock, const std::vector<WorkerSlot*>& who);
  int64_t Reduce(const std::vector<WorkerSlot*>& who, double* loss_sum);
  void EvaluateEpoch(int64_t epoch);
  void SaveCheckpoint();
  void SayGoodbye(const std::string& reason);
  void WriteReport(double train_seconds, int64_t samples);
  void LogProgress(double loss, int64_t samples_since, double seconds, const std::vector<WorkerSlot*>& who);

  HubConfig config_;
  proto::ModelSpec spec_;
  std::string spec_text_;
  kernels::CpuBackend backend_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<Optimizer> optimizer_;
  std::unique_ptr<Dataset> test_;
  int64_t train_samples_ = 0;
  int64_t global_batch_ = 0;
  int64_t steps_per_epoch_ = 0;
  int64_t total_steps_ = 0;
  int64_t resumed_from_ = -1;  // the checkpoint's step when resumed
  // What one more sample, and the model itself, cost a worker in memory:
  // the hub turns each worker's budget into a batch cap with these.
  size_t bytes_per_sample_ = 0, fixed_bytes_ = 0;

  std::unique_ptr<HubService> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<WorkerSlot>> slots_;  // index = worker id
  std::atomic<int64_t> step_{0};
  std::atomic<bool> stop_{false};
  bool finished_ = false;

  // The averaged gradient of the last step lives in the master model's
  // gradient buffer, which the hub never fills by backpropagation.
  float* average() const { return kernels::CpuBackend::Data(model_->grads()); }
  int64_t average_step_ = -1;
  uint64_t digest_before_ = 0;  // master weights' digest when the last step began

  BatchController controller_;
  struct BatchChange {
    int64_t step = 0;
    std::vector<std::pair<std::string, int>> batches;  // name, batch
  };
  std::vector<BatchChange> batch_changes_;  // the first kMaxBatchChanges, for the report
  int64_t batch_change_count_ = 0;
  Clock::time_point broadcast_at_;  // when the step's plan went out
  Clock::duration eval_pause_{};     // the hub's evaluation within this step
  double step_seconds_ema_ = 0;     // recent whole-step time, for the adaptive deadline

  // Gradients travel encoded; the hub applies the average exactly as the
  // workers decode it, and error feedback keeps what encoding drops.
  Compression compression_ = Compression::kNone;
  std::vector<float> broadcast_residual_;
  std::vector<std::string> encoded_average_;  // per chunk, reused every step
  // Gradient payload bytes (values or packed) in from workers and out in
  // step results, headers excluded: what --compress changes.
  int64_t gradient_bytes_in_ = 0, result_bytes_out_ = 0;
  void EncodeAverage();

  std::vector<EpochRecord> epochs_;
  double epoch_loss_sum_ = 0;
  int64_t epoch_samples_ = 0;
  double best_test_loss_ = 1e300;
  int64_t epochs_without_improvement_ = 0;
  std::string stop_reason_;
  // The hub's own work per step, barrier waits and evaluation excluded.
  double reduce_seconds_ = 0;     // averaging and the optimizer step
  double broadcast_seconds_ = 0;  // preparing the result and queueing it
  std::atomic<int64_t> write_cpu_ns_{0};  // starting writes off the step loop's thread
  double wall_seconds_ = 0;       // the same work in wall time
  double eval_seconds_ = 0;       // CPU spent evaluating (kept out of the shares)
  double process_seconds_ = 0;    // the whole process's CPU in the step loop, evaluation excluded
  int64_t samples_total_ = 0;
  double last_loss_ = 0;
};

}  // namespace mt
