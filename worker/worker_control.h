// How a worker running on its own thread is steered and watched from
// outside: the C API (worker/mt_worker.h) and mtworker's main both drive
// RunWorker through one of these. Stopping is cooperative (the worker tells
// the hub it leaves) but never waits on the network: a stop also cancels
// the call the worker may be blocked reading.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "worker/device_state.h"

namespace mt {

enum class WorkerState { kStarting, kJoining, kTraining, kReconnecting, kStopping, kDone, kFailed };
const char* WorkerStateName(WorkerState s);

struct WorkerStatus {
  WorkerState state = WorkerState::kStarting;
  int64_t step = 0;           // the hub's step this worker last trained
  int64_t steps_trained = 0;  // by this worker, over all sessions
  double loss = 0;            // the hub's mean loss of the last step
  int batch = 0;              // this worker's last batch
  double test_accuracy = -1;  // the hub's, once it said goodbye
  std::string last_error;
  std::string stop_reason;  // why the run ended for this worker
};

class WorkerControl {
 public:
  // Asks the worker to leave the run at once (or as soon as it is not in
  // the middle of a computation). Thread-safe.
  void RequestStop(const std::string& reason);
  // Its own stop or the process's SIGINT/SIGTERM.
  bool stop_requested() const;
  std::string stop_request_reason() const;

  // The current session: a stop tells the hub (leave) and then cancels the
  // Train call, so that a worker blocked reading ends at once and the hub
  // hears a Leave rather than a broken stream.
  using LeaveFn = std::function<void(const std::string& reason)>;
  void AttachCall(std::function<void()> cancel, LeaveFn leave);
  void DetachCall();
  // Whether a stop has already told the hub; waits for a Leave in flight,
  // so the caller cancels the call only after the hub has heard it.
  bool hub_told() const {
    std::lock_guard<std::mutex> call_lock(call_mu_);
    return hub_told_;
  }

  // The embedder's view of the device, if it gives one (else /sys is read).
  void PushDeviceState(const DeviceState& state);
  std::optional<DeviceState> pushed_device_state() const;

  void SetState(WorkerState state);
  void OnStep(int64_t step, int batch);
  void OnResult(double mean_loss);
  void OnGoodbye(double test_accuracy, const std::string& reason);
  void Fail(const std::string& error);
  void Finish(const std::string& reason);  // kDone
  WorkerStatus Snapshot() const;

 private:
  void LeaveAndCancel(const std::string& reason);  // call_mu_ held

  std::atomic<bool> stop_{false};
  std::atomic<bool> hub_told_{false};
  // Held while leaving, which may wait on the network: apart from mu_ so
  // polling the status never waits for it.
  mutable std::mutex call_mu_;
  std::function<void()> cancel_;  // the current call's; empty between sessions
  LeaveFn leave_;
  mutable std::mutex mu_;
  std::string stop_reason_;
  std::optional<DeviceState> pushed_;
  WorkerStatus status_;
};

}  // namespace mt
