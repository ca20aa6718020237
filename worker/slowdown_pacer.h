// mtworker --slowdown F (benchmarks and tests): plays a device F times
// slower than this machine by sleeping, after each piece of compute, F - 1
// times what that compute cost here.
//
// What it cost is the computing thread's CPU time when the worker computes
// on that one CPU thread (--threads 1 on the CPU, as the benches run their
// emulated phones), so the moments another process on this machine held the
// core are not multiplied by F: a real phone has its own cores. Measured in
// wall time, a 1 ms preemption made a worker with --slowdown 50 look 50 ms
// slower; on a 2-core machine running a hub and two emulated phones its cost
// per sample swung between 2x and 8x the true one and the batch controller
// chased the swings (docs/benchmarks.md, Wi-Fi). With pool threads or a GPU
// doing the work the calling thread's CPU time misses most of it, so wall
// time is used there.
#pragma once

namespace mt {

class SlowdownPacer {
 public:
  // `thread_cpu`: the compute runs on the calling thread alone.
  SlowdownPacer(double factor, bool thread_cpu) : factor_(factor), thread_cpu_(thread_cpu) {}

  bool active() const { return factor_ > 1; }
  // What `seconds` of compute here take on the device it plays.
  double Emulated(double seconds) const { return active() ? seconds * factor_ : seconds; }
  // The clock the pacer multiplies, read on the calling thread (seconds).
  double Now() const;
  // Sleeps F - 1 times the compute since `*since` (a Now() reading taken on
  // this thread), then moves `*since` to Now(). Does nothing when inactive
  // but move the mark. Paid after each step, not once per round: a slow
  // device is slow at every step, and workers sharing this machine's cores
  // then rarely compute at the same moment, as separate phones never would.
  void Pay(double* since) const;

 private:
  double factor_;
  bool thread_cpu_;
};

}  // namespace mt
