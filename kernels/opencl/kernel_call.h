// Setting a kernel's arguments and enqueueing it, with errors that name the
// kernel and the device. A View becomes two arguments, (global float* base,
// int offset), the convention every mt kernel follows; an empty view passes
// a null buffer, which the kernel must not touch.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/buffer.h"
#include "kernels/opencl/cl_error.h"

namespace mt::kernels {

class KernelCall {
 public:
  KernelCall(cl_kernel kernel, const std::string& device, const char* name)
      : kernel_(kernel), device_(device), name_(name) {}

  KernelCall& Arg(View v);
  KernelCall& Arg(int v) { return Set(sizeof(v), &v); }
  KernelCall& Arg(float v) { return Set(sizeof(v), &v); }
  KernelCall& Arg(uint64_t v) {
    const cl_ulong u = v;
    return Set(sizeof(u), &u);
  }

  // Runs over `global` work items in groups of `local`; the global size is
  // rounded up to a multiple of `local`, so kernels check their index.
  void Run(cl_command_queue queue, size_t global, size_t local = 64);

 private:
  KernelCall& Set(size_t size, const void* value);

  cl_kernel kernel_;
  const std::string& device_;
  const char* name_;
  cl_uint index_ = 0;
};

}  // namespace mt::kernels
