#include "hub/outbox.h"

#include <ctime>

namespace mt {

namespace {

int64_t ThreadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace

Outbox::Outbox(HubStream* stream, std::atomic<int64_t>* write_cpu_ns)
    : stream_(stream), write_cpu_ns_(write_cpu_ns), thread_([this] { Loop(); }) {}

Outbox::~Outbox() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool Outbox::Send(SharedMessage message) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (broken_ || closing_) return false;
    queue_.push_back(std::move(message));
  }
  cv_.notify_one();
  return true;
}

void Outbox::Abandon() {
  std::lock_guard<std::mutex> lock(mu_);
  queue_.clear();
  closing_ = true;
  cv_.notify_all();
}

void Outbox::Loop() {
  for (;;) {
    SharedMessage next;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return !queue_.empty() || closing_; });
      if (queue_.empty()) return;
      next = std::move(queue_.front());
      queue_.pop_front();
    }
    const int64_t t0 = ThreadCpuNs();
    const bool ok = stream_->Write(*next);
    write_cpu_ns_->fetch_add(ThreadCpuNs() - t0, std::memory_order_relaxed);
    if (!ok) {
      std::lock_guard<std::mutex> lock(mu_);
      broken_ = true;
      queue_.clear();
      return;
    }
  }
}

}  // namespace mt
