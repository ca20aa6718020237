// Helpers shared by the CPU backend tests: buffers filled from host vectors,
// and the relative-error measure every test compares with.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_backend.h"

namespace mt::kernels::test_support {

// A backend with memory (a CPU backend's) and no numeric op at all, named
// "bare": what each op's default and the op table do where an op is missing.
struct BareBackend : Backend {
  std::string Name() const override { return "bare"; }
  OpSet SupportedOps() const override { return {}; }
  std::unique_ptr<Buffer> Allocate(size_t count) override { return cpu.Allocate(count); }
  void Upload(const void* host, View dst) override { cpu.Upload(host, dst); }
  void Download(View src, void* host) override { cpu.Download(src, host); }
  void Copy(View src, View dst) override { cpu.Copy(src, dst); }
  void Fill(View dst, float value) override { cpu.Fill(dst, value); }
  void Synchronize() override {}
  CpuBackend cpu{1};
};

inline std::vector<float> RandomVector(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// A backend buffer holding a copy of `host`.
inline std::unique_ptr<Buffer> MakeBuffer(Backend& be, const std::vector<float>& host) {
  auto b = be.Allocate(host.size());
  if (!host.empty()) be.Upload(host.data(), WholeOf(*b));
  return b;
}

inline std::unique_ptr<Buffer> MakeIntBuffer(Backend& be, const std::vector<int32_t>& host) {
  auto b = be.Allocate(host.size());
  if (!host.empty()) be.Upload(host.data(), WholeOf(*b));
  return b;
}

inline std::vector<float> ToHost(Backend& be, Buffer& b) {
  std::vector<float> v(b.count());
  if (!v.empty()) be.Download(WholeOf(b), v.data());
  return v;
}

inline std::vector<int32_t> ToHostInt(Backend& be, Buffer& b) {
  std::vector<int32_t> v(b.count());
  if (!v.empty()) be.Download(WholeOf(b), v.data());
  return v;
}

// max |got - want| / max |want|: the error relative to the tensor's scale, so
// entries that cancel to near zero do not make a correct sum look wrong.
inline double MaxRelativeError(const std::vector<float>& got, const std::vector<double>& want) {
  EXPECT_EQ(got.size(), want.size());
  double scale = 0.0, err = 0.0;
  for (size_t i = 0; i < want.size() && i < got.size(); ++i) {
    scale = std::max(scale, std::fabs(want[i]));
    const double d = std::fabs(static_cast<double>(got[i]) - want[i]);
    // A NaN or infinity must fail the comparison; max() would drop a NaN.
    if (!std::isfinite(d)) return HUGE_VAL;
    err = std::max(err, d);
  }
  return err / std::max(scale, 1e-30);
}

inline std::vector<double> ToDouble(const std::vector<float>& v) {
  return std::vector<double>(v.begin(), v.end());
}

constexpr double kTolerance = 1e-4;

}  // namespace mt::kernels::test_support
