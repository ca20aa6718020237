#include "worker/lookahead.h"

#include <utility>

namespace mt {

Lookahead::Lookahead(std::function<void(int)> step) : step_(std::move(step)) {}

Lookahead::~Lookahead() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    quit_ = true;
    active_ = false;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Lookahead::Start(int max_steps) {
  std::unique_lock<std::mutex> lock(mu_);
  // Started once, on the first round: per-step runs never pay for a thread.
  if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
  max_steps_ = max_steps;
  taken_ = 0;
  error_ = nullptr;
  active_ = max_steps > 0;
  lock.unlock();
  cv_.notify_all();
}

int Lookahead::Stop() {
  std::unique_lock<std::mutex> lock(mu_);
  active_ = false;
  cv_.wait(lock, [this] { return !busy_; });
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  return std::exchange(taken_, 0);
}

bool Lookahead::running() const {
  std::lock_guard<std::mutex> lock(mu_);
  return busy_ || active_;
}

void Lookahead::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return quit_ || active_; });
    if (quit_) break;
    // Only this thread sets busy_: a Stop before it wakes finds it idle,
    // and it then finds nothing wanted.
    busy_ = true;
    while (active_ && taken_ < max_steps_) {
      const int k = taken_;
      lock.unlock();
      try {
        step_(k);
      } catch (...) {
        lock.lock();
        error_ = std::current_exception();
        active_ = false;
        break;
      }
      lock.lock();
      ++taken_;
    }
    active_ = false;
    busy_ = false;
    cv_.notify_all();
  }
}

}  // namespace mt
