// Streams that have not said Hello yet, each with the moment it must have:
// a peer that opens Train streams and never speaks would otherwise hold a
// call (and its HTTP/2 stream) for as long as it likes. A sweeper thread
// closes the late ones; a stream that says Hello in time, or ends, leaves.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace mt {

// What the sweeper may do to a stream: close it, unless it has meanwhile
// said Hello or ended.
class HelloWaiter {
 public:
  virtual ~HelloWaiter() = default;
  virtual void CloseForNoHello() = 0;
};

class HelloDeadlines {
 public:
  using Clock = std::chrono::steady_clock;

  // One stream's entry, shared by the stream and the sweeper so that
  // neither outlives the other's view of it.
  class Entry {
   public:
    // The stream said Hello or ended: never close it from here. Blocks
    // while the sweeper is closing it.
    void Withdraw();

   private:
    friend class HelloDeadlines;
    // Recursive: a stream closed by the sweeper may end (and withdraw) on
    // the sweeper's own thread, inside CloseForNoHello.
    std::recursive_mutex mu_;
    HelloWaiter* waiter_;
    Clock::time_point deadline_;
  };

  explicit HelloDeadlines(std::chrono::milliseconds timeout);
  ~HelloDeadlines();  // stops the sweeper; closes nothing
  HelloDeadlines(const HelloDeadlines&) = delete;
  HelloDeadlines& operator=(const HelloDeadlines&) = delete;

  // Starts the clock for `waiter`, which must call Withdraw() on the
  // returned entry before it is destroyed.
  std::shared_ptr<Entry> Add(HelloWaiter* waiter);

 private:
  void Sweep();

  const std::chrono::milliseconds timeout_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::vector<std::shared_ptr<Entry>> entries_;  // in deadline order (one timeout for all)
  std::thread sweeper_;
};

}  // namespace mt
