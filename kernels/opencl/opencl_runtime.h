// What every backend on one device shares: the context and mt's program,
// built once per process from the .cl sources embedded in the binary at build
// time (kernels/opencl/cl/*.cl), so there are no files to ship and no second
// compile when a test or the placement probe makes another backend.
#pragma once

#include <memory>
#include <string>

#include "kernels/opencl/cl_handle.h"
#include "kernels/opencl/opencl_device.h"

namespace mt::kernels {

class OpenClRuntime {
 public:
  // The runtime for `device`, created on first use; later calls share it.
  static std::shared_ptr<OpenClRuntime> For(const OpenClDevice& device);

  explicit OpenClRuntime(const OpenClDevice& device);
  const OpenClDevice& device() const { return device_; }
  const std::string& device_name() const { return device_.name; }
  cl_context context() const { return context_.get(); }
  cl_program program() const { return program_.get(); }

 private:
  OpenClDevice device_;
  ClContext context_;
  ClProgram program_;
};

// The concatenated .cl sources (generated at build time).
extern const char* const kOpenClProgramSource;

}  // namespace mt::kernels
