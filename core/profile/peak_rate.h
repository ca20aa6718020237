// A backend's practical peak: the best rate of square GEMMs through the
// Backend interface (the CPU backend with its thread pool, an OpenCL device
// through CLBlast), the yardstick for a layer's share of its device's peak.
// Measured, not looked up: clock speeds, turbo and shared cores make a
// datasheet figure meaningless on the machines mt runs on.
#pragma once

#include <string>

#include "kernels/backend.h"

namespace mt {

struct PeakRate {
  double gflops_per_s = 0;
  std::string method;  // how it was obtained, for the profile's table and report
};

// Runs n x n x n products on `backend` for about `budget_seconds` (after one
// untimed product that sizes its scratch) and keeps the fastest. Allocates
// three n x n buffers for the while.
PeakRate MeasureGemmPeak(kernels::Backend& backend, double budget_seconds = 0.2, int n = 256);

}  // namespace mt
