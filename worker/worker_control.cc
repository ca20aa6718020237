#include "worker/worker_control.h"

#include <utility>

#include "core/util/stop_signal.h"

namespace mt {

const char* WorkerStateName(WorkerState s) {
  switch (s) {
    case WorkerState::kStarting: return "starting";
    case WorkerState::kJoining: return "joining";
    case WorkerState::kTraining: return "training";
    case WorkerState::kReconnecting: return "reconnecting";
    case WorkerState::kStopping: return "stopping";
    case WorkerState::kDone: return "done";
    case WorkerState::kFailed: return "failed";
  }
  return "?";
}

void WorkerControl::RequestStop(const std::string& reason) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return;
    stop_reason_ = reason;
    stop_ = true;
  }
  std::lock_guard<std::mutex> call_lock(call_mu_);
  LeaveAndCancel(reason);
}

void WorkerControl::LeaveAndCancel(const std::string& reason) {
  if (!cancel_) return;
  if (leave_ && !hub_told_.exchange(true)) leave_(reason);
  cancel_();
}

bool WorkerControl::stop_requested() const { return stop_; }

std::string WorkerControl::stop_request_reason() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stop_ ? stop_reason_ : "worker stopped by signal";
}

void WorkerControl::AttachCall(std::function<void()> cancel, LeaveFn leave) {
  std::lock_guard<std::mutex> call_lock(call_mu_);
  cancel_ = std::move(cancel);
  leave_ = std::move(leave);
  hub_told_ = false;
  if (stop_) LeaveAndCancel(stop_request_reason());
}

void WorkerControl::DetachCall() {
  std::lock_guard<std::mutex> call_lock(call_mu_);
  cancel_ = nullptr;
  leave_ = nullptr;
}

void WorkerControl::PushDeviceState(const DeviceState& state) {
  std::lock_guard<std::mutex> lock(mu_);
  pushed_ = state;
}

std::optional<DeviceState> WorkerControl::pushed_device_state() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pushed_;
}

void WorkerControl::SetState(WorkerState state) {
  std::lock_guard<std::mutex> lock(mu_);
  status_.state = state;
}

void WorkerControl::OnStep(int64_t step, int batch) {
  std::lock_guard<std::mutex> lock(mu_);
  status_.state = WorkerState::kTraining;
  status_.step = step;
  status_.batch = batch;
  ++status_.steps_trained;
}

void WorkerControl::OnResult(double mean_loss) {
  std::lock_guard<std::mutex> lock(mu_);
  status_.loss = mean_loss;
}

void WorkerControl::OnGoodbye(double test_accuracy, const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  status_.test_accuracy = test_accuracy;
  status_.stop_reason = reason;
}

void WorkerControl::Fail(const std::string& error) {
  std::lock_guard<std::mutex> lock(mu_);
  status_.state = WorkerState::kFailed;
  status_.last_error = error;
}

void WorkerControl::Finish(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  status_.state = WorkerState::kDone;
  if (status_.stop_reason.empty()) status_.stop_reason = reason;
}

WorkerStatus WorkerControl::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

}  // namespace mt
