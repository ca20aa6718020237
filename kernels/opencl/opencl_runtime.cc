#include "kernels/opencl/opencl_runtime.h"

#include <map>
#include <mutex>
#include <string>

namespace mt::kernels {

std::shared_ptr<OpenClRuntime> OpenClRuntime::For(const OpenClDevice& device) {
  static std::mutex mu;
  static std::map<cl_device_id, std::weak_ptr<OpenClRuntime>> cache;
  std::lock_guard<std::mutex> lock(mu);
  if (auto existing = cache[device.id].lock()) return existing;
  auto runtime = std::make_shared<OpenClRuntime>(device);
  cache[device.id] = runtime;
  return runtime;
}

OpenClRuntime::OpenClRuntime(const OpenClDevice& device) : device_(device) {
  cl_int status = CL_SUCCESS;
  const cl_context_properties props[] = {
      CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(device.platform), 0};
  context_ = ClContext(clCreateContext(props, 1, &device.id, nullptr, nullptr, &status));
  ClCheck(status, "clCreateContext", device.name);
  const char* source = kOpenClProgramSource;
  program_ = ClProgram(clCreateProgramWithSource(context_.get(), 1, &source, nullptr, &status));
  ClCheck(status, "clCreateProgramWithSource", device.name);
  // No fast-math options: the results must match the CPU backend's to 1e-4.
  status = clBuildProgram(program_.get(), 1, &device.id, "", nullptr, nullptr);
  if (status != CL_SUCCESS) {
    size_t n = 0;
    clGetProgramBuildInfo(program_.get(), device.id, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
    std::string log(n, '\0');
    clGetProgramBuildInfo(program_.get(), device.id, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr);
    throw std::runtime_error(
        std::string(OpenClError("clBuildProgram", device.name, status).what()) + "\nbuild log:\n" +
        log);
  }
}

}  // namespace mt::kernels
