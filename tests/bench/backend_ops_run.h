// Running one case of backend_ops_bench on one backend: the median time of
// the op (and of moving its data between host and device), its outputs, and
// how far another backend's outputs are from the CPU's.
#pragma once

#include <chrono>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "kernels/backend.h"
#include "tests/bench/backend_ops_cases.h"

namespace mt::kernels::bench {

constexpr int kWarmup = 3;

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start);

// The median of `v`; NaN when it is empty.
double Median(std::vector<double> v);

struct Timing {
  double op_ms = NAN;    // median of call + Synchronize
  double copy_ms = NAN;  // median of uploading the inputs and downloading the outputs
  std::vector<std::vector<float>> outputs;  // after the op, in tensor order
  double scalar = 0.0;                      // the op's return value
};

// Runs `c` kWarmup times, then `repeat` timed times, on `be`; with
// `time_copies`, also times moving its inputs and outputs `repeat` times.
Timing TimeOn(Backend& be, const OpCase& c, int repeat, bool time_copies);

// The worst max relative error over the case's outputs (and its scalar
// result) on the OpenCL backend against the CPU, and which output it is in.
std::pair<double, std::string> CompareOutputs(const OpCase& c, const Timing& cl, const Timing& cpu);

// The fixed cost of one enqueue and the wait for it: Fill of one float, then
// Synchronize (median of 200, after 20 warm-up).
double LaunchMs(Backend& be);

}  // namespace mt::kernels::bench
