// Backends by name for parameterised tests: "cpu1", "cpu3" (the CPU backend
// with that many threads) and "opencl" (the default OpenCL device). Returns
// null for "opencl" when the build or the machine has no OpenCL; the test
// then skips with kNoOpenCl.
#pragma once

#include <memory>
#include <string>

#include "kernels/cpu/cpu_backend.h"
#if MT_HAVE_OPENCL
#include "kernels/opencl/opencl_backend.h"
#include "kernels/opencl/opencl_device.h"
#endif

namespace mt::testing {

constexpr const char* kNoOpenCl = "no OpenCL platform on this machine (or a build without OpenCL)";

inline std::unique_ptr<kernels::Backend> MakeTestBackend(const std::string& name) {
  if (name.rfind("cpu", 0) == 0) return std::make_unique<kernels::CpuBackend>(std::stoi(name.substr(3)));
#if MT_HAVE_OPENCL
  if (name == "opencl" && !kernels::ListOpenClDevices().empty())
    return std::make_unique<kernels::OpenClBackend>(kernels::DefaultOpenClDevice());
#endif
  return nullptr;
}

}  // namespace mt::testing
