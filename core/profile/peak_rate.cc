#include "core/profile/peak_rate.h"

#include <algorithm>
#include <chrono>
#include <vector>

namespace mt {

PeakRate MeasureGemmPeak(kernels::Backend& backend, double budget_seconds, int n) {
  using Clock = std::chrono::steady_clock;
  const size_t count = static_cast<size_t>(n) * static_cast<size_t>(n);
  const auto a = backend.Allocate(count), b = backend.Allocate(count), c = backend.Allocate(count);
  std::vector<float> host(count);
  for (size_t i = 0; i < count; ++i) host[i] = static_cast<float>(i % 7) * 0.25f - 0.75f;
  backend.Upload(host.data(), kernels::WholeOf(*a));
  backend.Upload(host.data(), kernels::WholeOf(*b));
  auto product = [&] {
    backend.Gemm(false, false, n, n, n, 1.0f, kernels::WholeOf(*a), kernels::WholeOf(*b), 0.0f,
                 kernels::WholeOf(*c));
    backend.Synchronize();
  };
  product();  // sizes the backend's packing scratch, compiles kernels
  double best = 1e30;
  int runs = 0;
  const auto start = Clock::now();
  while (runs < 3 || std::chrono::duration<double>(Clock::now() - start).count() < budget_seconds) {
    const auto t = Clock::now();
    product();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t).count());
    ++runs;
  }
  PeakRate peak;
  peak.gflops_per_s = 2.0 * n * n * static_cast<double>(n) / std::max(best, 1e-12) / 1e9;
  peak.method = "fastest of " + std::to_string(runs) + " " + std::to_string(n) + "x" +
                std::to_string(n) + "x" + std::to_string(n) + " GEMMs on " + backend.Name();
  return peak;
}

}  // namespace mt
