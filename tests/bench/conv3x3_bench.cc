// Dense 3x3 convolutions (stride 1, padding 1) on the CPU backend, one
// direction at a time: forward, input gradient (d_in only) and weight
// gradient (d_weight and d_bias only), through CpuBackend so each direction
// runs the path a layer would get. Prints GFLOP/s and the percentage of the
// measured peak, which is found as the profiler finds it: the fastest
// 256x256x256 GEMM on the same pool (core/profile/peak_rate.cc).
//
//   conv3x3_bench [threads (default 1)] [reps (default 20)] [batch (default 64)]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <ctime>
#include <vector>

#include "kernels/cpu/cpu_backend.h"

namespace mt::kernels {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<float> Random(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

// On one thread, time is the thread's CPU time, so the other processes of a
// shared machine cost a call only their cache pollution, not their time
// slices; on more, wall time (the helpers' time is what is being measured).
bool g_cpu_time = true;

double Now() {
  if (!g_cpu_time) return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// Fastest of `reps` calls after a warm-up, in seconds: the same statistic
// as the peak, so the percentage compares like with like.
double FastestSeconds(int reps, const std::function<void()>& f) {
  f();
  double best = 1e30;
  for (int i = 0; i < reps; ++i) {
    const double t = Now();
    f();
    best = std::min(best, Now() - t);
  }
  return best;
}

struct Buffers {
  Backend& backend;
  std::vector<std::unique_ptr<Buffer>> owned;
  View Make(const std::vector<float>& host) {
    owned.push_back(backend.Allocate(host.size()));
    backend.Upload(host.data(), WholeOf(*owned.back()));
    return WholeOf(*owned.back());
  }
  View Zeros(size_t n) { return Make(std::vector<float>(n, 0.0f)); }
};

double PeakGflops(CpuBackend& cpu) {
  const int n = 256;
  Buffers b{cpu, {}};
  const View x = b.Make(Random(size_t(n) * n, 1)), y = b.Make(Random(size_t(n) * n, 2));
  const View z = b.Zeros(size_t(n) * n);
  const auto start = Clock::now();
  double best = 1e30;
  cpu.Gemm(false, false, n, n, n, 1.0f, x, y, 0.0f, z);
  while (std::chrono::duration<double>(Clock::now() - start).count() < 0.5) {
    const double t = Now();
    cpu.Gemm(false, false, n, n, n, 1.0f, x, y, 0.0f, z);
    best = std::min(best, Now() - t);
  }
  return 2.0 * n * n * n / best / 1e9;
}

struct Layer {
  int in_c, out_c, hw;
};

void Run(CpuBackend& cpu, const Layer& l, int batch, int reps, double peak) {
  ConvGeometry g;
  g.batch = batch;
  g.in_c = l.in_c;
  g.out_c = l.out_c;
  g.in_h = g.in_w = l.hw;
  g.kernel = 3;
  g.stride = 1;
  g.pad = 1;
  Buffers b{cpu, {}};
  const View in = b.Make(Random(size_t(batch) * g.in_size(), 3));
  const View w = b.Make(Random(g.weight_count(), 4));
  const View bias = b.Make(Random(g.out_c, 5));
  const View dy = b.Make(Random(size_t(batch) * g.out_size(), 6));
  const View out = b.Zeros(size_t(batch) * g.out_size());
  const View dx = b.Zeros(size_t(batch) * g.in_size());
  const View dw = b.Zeros(g.weight_count()), db = b.Zeros(g.out_c);
  const View ws = b.Zeros(std::max<size_t>(1, cpu.ConvWorkspaceCount(g)));
  const double flops = 2.0 * batch * g.out_size() * g.patch();
  const double t[3] = {
      FastestSeconds(reps, [&] { cpu.Conv2dForward(g, in, w, bias, out, ws); }),
      FastestSeconds(reps, [&] { cpu.Conv2dBackward(g, in, w, dy, dx, View{}, View{}, ws); }),
      FastestSeconds(reps, [&] { cpu.Conv2dBackward(g, in, w, dy, View{}, dw, db, ws); }),
  };
  std::printf("%4d->%-4d %3dx%-3d", l.in_c, l.out_c, l.hw, l.hw);
  for (double s : t) {
    const double gf = flops / s / 1e9;
    std::printf(" | %7.2f ms %6.1f GF/s %5.1f%%", s * 1e3, gf, 100.0 * gf / peak);
  }
  std::printf(" | ws %6.0f KiB\n", cpu.ConvWorkspaceCount(g) * 4.0 / 1024);
}

}  // namespace
}  // namespace mt::kernels

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 1;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 20;
  const int batch = argc > 3 ? std::atoi(argv[3]) : 64;
  mt::kernels::g_cpu_time = threads == 1;
  mt::kernels::CpuBackend cpu(threads);
  const double peak = mt::kernels::PeakGflops(cpu);
  std::printf("3x3 conv, stride 1, padding 1, batch %d, %d thread(s), fastest of %d; peak %.1f "
              "GFLOP/s (fastest 256^3 GEMM); %s time\n",
              batch, threads, reps, peak, threads == 1 ? "thread CPU" : "wall");
  std::printf("%-18s | %-32s | %-32s | %-32s |\n", "layer", "forward", "input gradient",
              "weight gradient");
  // Mentee's layers first (conv2..conv5), then the square C x C grid.
  const mt::kernels::Layer layers[] = {
      {32, 32, 32}, {32, 64, 16},  {64, 64, 16},   {64, 128, 8},  {32, 32, 16},
      {32, 32, 8},  {64, 64, 32},  {64, 64, 8},    {128, 128, 32}, {128, 128, 16},
      {128, 128, 8},
  };
  for (const auto& l : layers) mt::kernels::Run(cpu, l, batch, reps, peak);
  return 0;
}
