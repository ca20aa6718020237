// What the hub's log says of its checkpoints. With --checkpoint-every 10 on
// a fast run, one line per checkpoint was half of the log: each checkpoint
// is a debug line, at most one a minute is an info line (so a long run
// still shows they are being written), and the run's end sums them up.
// Clock-free: the hub gives the time.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace mt {

class CheckpointLog {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::seconds kInfoEvery{60};

  // A checkpoint of `step` was written to `path` at `now`: its line, and
  // whether it is due at info level.
  struct Line {
    std::string text;
    bool info = false;
  };
  Line Written(int64_t step, const std::string& path, Clock::time_point now);

  // "3 checkpoints written, the last at step 300: DIR/ckpt-300.mtc"; empty
  // when none was.
  std::string Summary() const;

  int64_t count() const { return count_; }

 private:
  int64_t count_ = 0;
  int64_t last_step_ = -1;
  std::string last_path_;
  std::optional<Clock::time_point> last_info_;
};

}  // namespace mt
