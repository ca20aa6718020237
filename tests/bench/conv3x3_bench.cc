// Dense 3x3 convolutions (stride 1, padding 1) on the CPU backend, one
// direction at a time: forward, input gradient (d_in only) and weight
// gradient (d_weight and d_bias only), through CpuBackend so each direction
// runs the path a layer would get, against the paths it had before the
// channel-vectorised kernel (direct_conv.h, else gemm_conv.h). Prints GFLOP/s and the percentage of
// the measured peak, which is found as the profiler finds it: the fastest 256x256x256 GEMM on the
// same pool (core/profile/peak_rate.cc).
//
//   conv3x3_bench [threads (default 1)] [reps (default 20)] [batch (default 64)]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <random>
#include <vector>

#include "kernels/cpu/conv3x3.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/direct_conv.h"
#include "kernels/cpu/gemm_conv.h"
#include "kernels/cpu/thread_pool.h"

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

// Both paths, calls alternating so the machine's load hits them alike.
void FastestPair(int reps, const std::function<void()>& a, const std::function<void()>& b,
                 double* ta, double* tb) {
  a();
  b();
  *ta = *tb = 1e30;
  for (int i = 0; i < reps; ++i) {
    double t = Now();
    a();
    *ta = std::min(*ta, Now() - t);
    t = Now();
    b();
    *tb = std::min(*tb, Now() - t);
  }
}

void Print(const char* path, const double* t, double flops, double peak) {
  std::printf(" %-11s", path);
  for (int d = 0; d < 3; ++d) {
    const double gf = flops / t[d] / 1e9;
    std::printf(" | %7.2f ms %6.1f GF/s %5.1f%%", t[d] * 1e3, gf, 100.0 * gf / peak);
  }
}

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
  auto D = [](View v) { return CpuBackend::Data(v); };
  const View in = b.Make(Random(size_t(batch) * g.in_size(), 3));
  const View w = b.Make(Random(g.weight_count(), 4));
  const View bias = b.Make(Random(g.out_c, 5));
  const View dy = b.Make(Random(size_t(batch) * g.out_size(), 6));
  const View out = b.Zeros(size_t(batch) * g.out_size());
  const View dx = b.Zeros(size_t(batch) * g.in_size());
  const View dw = b.Zeros(g.weight_count()), db = b.Zeros(g.out_c);
  const int threads = cpu.pool().size();
  const size_t ws_new = cpu.ConvWorkspaceCount(g);
  const bool direct_fwd = DirectConvFasterForward(g), direct_bwd = DirectConvFasterBackward(g);
  const size_t ws_old =
      std::max(direct_fwd || direct_bwd ? DirectConvWorkspaceFloats(g, threads) : 0,
               !direct_fwd || !direct_bwd ? GemmConvWorkspaceFloats(g, threads) : 0);
  const View ws = b.Zeros(std::max(
      {ws_new, DirectConvWorkspaceFloats(g, threads), GemmConvWorkspaceFloats(g, threads)}));
  // What the backend ran before the 3x3 kernel: direct where it was
  // measured faster, else im2col + GEMM.
  auto old_fwd = [&] {
    if (DirectConvFasterForward(g)) {
      DirectConvForward(cpu.pool(), g, D(in), D(w), D(bias), D(out), D(ws));
    } else {
      GemmConvForward(cpu.pool(), g, D(in), D(w), D(bias), D(out), D(ws));
    }
  };
  auto old_bwd = [&](float* d_in, float* d_w, float* d_b) {
    if (DirectConvFasterBackward(g)) {
      DirectConvBackward(cpu.pool(), g, D(in), D(w), D(dy), d_in, d_w, d_b, D(ws));
    } else {
      GemmConvBackward(cpu.pool(), g, D(in), D(w), D(dy), d_in, d_w, d_b, D(ws));
    }
  };
  double t_new[3], t_old[3];
  FastestPair(
      reps, [&] { cpu.Conv2dForward(g, in, w, bias, out, ws); }, old_fwd, &t_new[0], &t_old[0]);
  FastestPair(
      reps, [&] { cpu.Conv2dBackward(g, in, w, dy, dx, View{}, View{}, ws); },
      [&] { old_bwd(D(dx), nullptr, nullptr); }, &t_new[1], &t_old[1]);
  FastestPair(
      reps, [&] { cpu.Conv2dBackward(g, in, w, dy, View{}, dw, db, ws); },
      [&] { old_bwd(nullptr, D(dw), D(db)); }, &t_new[2], &t_old[2]);
  const double flops = 2.0 * batch * g.out_size() * g.patch();
  std::printf("%4d->%-4d %3dx%-3d", l.in_c, l.out_c, l.hw, l.hw);
  Print(Conv3x3Handles(g) ? "conv3x3" : "backend", t_new, flops, peak);
  std::printf(" | ws %6.0f KiB\n%18s", ws_new * 4.0 / 1024, "");
  Print("direct/gemm", t_old, flops, peak);
  std::printf(" | ws %6.0f KiB\n", ws_old * 4.0 / 1024);
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
  std::printf(
      "3x3 conv, stride 1, padding 1, batch %d, %d thread(s), fastest of %d; peak %.1f "
      "GFLOP/s (fastest 256^3 GEMM); %s time\n",
      batch, threads, reps, peak, threads == 1 ? "thread CPU" : "wall");
  std::printf("%-18s %-11s | %-32s | %-32s | %-32s |\n", "layer", "path", "forward",
              "input gradient", "weight gradient");
  // Mentee's layers first (conv2..conv5), then the square C x C grid, then
  // one vector of channels (on AVX-512), the narrowest the 3x3 kernel takes.
  const mt::kernels::Layer layers[] = {
      {32, 32, 32},  {32, 64, 16}, {64, 64, 16}, {64, 128, 8},   {32, 32, 16},
      {32, 32, 8},   {64, 64, 32}, {64, 64, 8},  {128, 128, 32}, {128, 128, 16},
      {128, 128, 8}, {16, 16, 32}, {16, 32, 16},
  };
  for (const auto& l : layers) mt::kernels::Run(cpu, l, batch, reps, peak);
  return 0;
}
