// Local SGD with overlap: once a worker has sent a round's change, it goes
// on with the next round's steps on a thread of its own while the change
// travels to the hub and the average comes back, so the exchange hides
// behind compute instead of adding to every round. The session stops it
// when the hub's next message arrives; a step in progress is finished, not
// thrown away (on a phone it is real work), and counts toward the round.
#pragma once

#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace mt {

class Lookahead {
 public:
  // `step(k)` takes the k-th step ahead (k = 0, 1, ...); it runs on the
  // lookahead's thread, which owns the model until Stop returns.
  explicit Lookahead(std::function<void(int)> step);
  ~Lookahead();  // stops and joins; never throws
  Lookahead(const Lookahead&) = delete;
  Lookahead& operator=(const Lookahead&) = delete;

  // Takes up to `max_steps` steps until Stop.
  void Start(int max_steps);
  // Waits for the step in progress; returns how many steps were taken
  // since Start (0 when not started). Rethrows what a step threw.
  int Stop();
  bool running() const;

 private:
  void Loop();

  std::function<void(int)> step_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::thread thread_;
  bool quit_ = false;
  bool active_ = false;  // steps wanted
  bool busy_ = false;    // the thread is taking steps
  int max_steps_ = 0, taken_ = 0;
  std::exception_ptr error_;
};

}  // namespace mt
