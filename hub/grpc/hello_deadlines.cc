#include "hub/grpc/hello_deadlines.h"

#include <algorithm>

namespace mt {

void HelloDeadlines::Entry::Withdraw() {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  waiter_ = nullptr;
}

HelloDeadlines::HelloDeadlines(std::chrono::milliseconds timeout)
    : timeout_(timeout), sweeper_([this] { Sweep(); }) {}

HelloDeadlines::~HelloDeadlines() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  sweeper_.join();
}

std::shared_ptr<HelloDeadlines::Entry> HelloDeadlines::Add(HelloWaiter* waiter) {
  auto entry = std::make_shared<Entry>();
  entry->waiter_ = waiter;
  entry->deadline_ = Clock::now() + timeout_;
  std::lock_guard<std::mutex> lock(mu_);
  entries_.push_back(entry);
  return entry;
}

void HelloDeadlines::Sweep() {
  // Checked a few times per timeout: a stream is closed at most a quarter
  // of the timeout late.
  const auto period = std::max(timeout_ / 4, std::chrono::milliseconds(10));
  std::vector<std::shared_ptr<Entry>> due;
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    wake_.wait_for(lock, period);
    const auto now = Clock::now();
    // Entries were added in deadline order; those past it, or withdrawn,
    // leave the front.
    size_t n = 0;
    while (n < entries_.size() && entries_[n]->deadline_ <= now) ++n;
    due.assign(entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(n));
    entries_.erase(entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(n));
    // Withdrawn entries further back are dropped too, so that the list
    // holds only streams still waiting.
    entries_.erase(std::remove_if(entries_.begin(), entries_.end(),
                                  [](const std::shared_ptr<Entry>& e) {
                                    std::lock_guard<std::recursive_mutex> l(e->mu_);
                                    return e->waiter_ == nullptr;
                                  }),
                   entries_.end());
    lock.unlock();
    for (const auto& e : due) {
      // Under the entry's lock, so the stream cannot end (and be deleted)
      // while it is being closed; it withdraws before it goes.
      std::lock_guard<std::recursive_mutex> l(e->mu_);
      if (e->waiter_ != nullptr) e->waiter_->CloseForNoHello();
      e->waiter_ = nullptr;
    }
    due.clear();
    lock.lock();
  }
}

}  // namespace mt
