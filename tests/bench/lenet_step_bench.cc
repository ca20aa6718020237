// Per-op timings of one LeNet-5 training step (batch 64) on the CPU backend
// with 1 and 2 threads: where a step's time goes, op by op.
//   build/tests/bench/lenet_step_bench [STEPS]   (default 300 timed steps)

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tests/kernels/lenet_step.h"

namespace mt::kernels {
namespace {

double Median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

void RunLeNetTiming(int threads, int steps) {
  const int batch = 64;
  CpuBackend be(threads);
  test_support::LeNetStep step(be, batch);
  auto& ops = step.ops();
  const int warmup = 20;
  using Clock = std::chrono::steady_clock;
  std::vector<std::vector<double>> op_micros(ops.size());
  std::vector<double> step_micros;
  for (int s = 0; s < steps + warmup; ++s) {
    const auto step_start = Clock::now();
    for (size_t i = 0; i < ops.size(); ++i) {
      const auto t0 = Clock::now();
      ops[i].second();
      const auto t1 = Clock::now();
      if (s >= warmup)
        op_micros[i].push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
    if (s >= warmup) {
      step_micros.push_back(
          std::chrono::duration<double, std::micro>(Clock::now() - step_start).count());
    }
  }
  std::printf("LeNet-5 step, batch %d, %d thread(s), median of %d steps (loss %.3f)\n", batch,
              threads, steps, step.loss() / batch);
  double sum = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    const double m = Median(op_micros[i]);
    sum += m;
    std::printf("  %-14s %8.1f us\n", ops[i].first.c_str(), m);
  }
  const double med = Median(step_micros);
  std::printf("  %-14s %8.1f us (sum of op medians %.1f) -> %.0f samples/s\n", "step", med, sum,
              batch * 1e6 / med);
}

}  // namespace
}  // namespace mt::kernels

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 300;
  if (argc > 2 || steps < 1) {
    std::fprintf(stderr, "usage: %s [STEPS]  (timed steps per thread count, default 300)\n",
                 argv[0]);
    return 2;
  }
  mt::kernels::RunLeNetTiming(1, steps);
  mt::kernels::RunLeNetTiming(2, steps);
  return 0;
}
