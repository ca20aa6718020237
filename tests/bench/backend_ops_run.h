// Running one case of the backend op table (tests/kernels/backend_op_cases.h,
// the table the backend tests run) on one backend for backend_ops_bench: the
// median time of the case's op (and of moving its data between host and
// device), its outputs, and how far another backend's outputs are from the
// CPU's.
#pragma once

#include <chrono>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "kernels/backend.h"
#include "tests/kernels/backend_op_cases.h"
#include "tests/support/intercepting_backend.h"

namespace mt::kernels::bench {

constexpr int kWarmup = 3;

using Clock = std::chrono::steady_clock;
using test_support::OpCase;

double MsSince(Clock::time_point start);

// The median of `v`; NaN when it is empty.
double Median(std::vector<double> v);

// What TimedBackend measured of its armed op.
struct OpTime {
  double ms = 0.0;  // the sum over the op's calls of each call's median (call + Synchronize)
  int calls = 0;    // calls of the op in one run of the case
};

// Times the calls of one op while the rest of a case (the ops it needs
// first, uploads, downloads) runs once.
class OpTimer {
 public:
  virtual ~OpTimer() = default;
  virtual void Arm(Op op, int repeat) = 0;
  virtual OpTime Disarm() = 0;
};

// Base (CpuBackend, OpenClBackend) whose armed op runs kWarmup times, then
// `repeat` timed times, at each call.
template <class Base>
class TimedBackend : public ::mt::test_support::InterceptingBackend<Base>, public OpTimer {
 public:
  template <class... BaseArgs>
  explicit TimedBackend(BaseArgs&&... args)
      : ::mt::test_support::InterceptingBackend<Base>(std::forward<BaseArgs>(args)...) {}

  void Arm(Op op, int repeat) override {
    op_ = op;
    repeat_ = repeat;
    armed_ = true;
    time_ = OpTime{};
  }
  OpTime Disarm() override {
    armed_ = false;
    return time_;
  }

 protected:
  void Intercept(OpSet ops, std::initializer_list<View> views,
                 const std::function<void()>& call) override {
    if (!armed_ || !ops.Has(op_)) return call();
    for (int i = 0; i < kWarmup; ++i) call();
    this->Synchronize();
    std::vector<double> samples;
    for (int i = 0; i < repeat_; ++i) {
      const auto start = Clock::now();
      call();
      this->Synchronize();
      samples.push_back(MsSince(start));
    }
    time_.ms += Median(samples);
    ++time_.calls;
  }

 private:
  Op op_ = Op::kGemm;
  int repeat_ = 1;
  bool armed_ = false;
  OpTime time_;
};

struct Timing {
  double op_ms = NAN;    // median of call + Synchronize (summed over the op's calls)
  double copy_ms = NAN;  // median of uploading the inputs and downloading the outputs
  int calls = 0;         // of the op, per run of the case
  std::vector<test_support::Output> outputs;
};

// Runs `c` on `be` (which is `timer`) with its op timed `repeat` times; with
// `time_copies`, also times moving its inputs and outputs `repeat` times.
Timing TimeOn(Backend& be, OpTimer& timer, const OpCase& c, int repeat, bool time_copies);

// The worst max relative error over the case's outputs on another backend
// against the CPU, and which output it is in. Both ran the op equally often,
// so even an op that accumulates (Axpy, the optimizers) compares.
std::pair<double, std::string> CompareOutputs(const Timing& other, const Timing& cpu);

// The fixed cost of one enqueue and the wait for it: Fill of one float, then
// Synchronize (median of 200, after 20 warm-up).
double LaunchMs(Backend& be);

}  // namespace mt::kernels::bench
