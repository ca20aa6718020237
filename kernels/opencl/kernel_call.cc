#include "kernels/opencl/kernel_call.h"

#include "kernels/opencl/opencl_buffer.h"

namespace mt::kernels {

KernelCall& KernelCall::Set(size_t size, const void* value) {
  const cl_int status = clSetKernelArg(kernel_, index_, size, value);
  if (status != CL_SUCCESS)
    throw OpenClError(std::string("clSetKernelArg(") + name_ + ", " + std::to_string(index_) + ")",
                      device_, status);
  ++index_;
  return *this;
}

KernelCall& KernelCall::Arg(View v) {
  const cl_mem mem = v.buffer ? static_cast<OpenClBuffer*>(v.buffer)->mem() : nullptr;
  Set(sizeof(cl_mem), &mem);
  return Arg(static_cast<int>(v.offset));
}

void KernelCall::Run(cl_command_queue queue, size_t global, size_t local) {
  if (global == 0) return;
  const size_t rounded = (global + local - 1) / local * local;
  const cl_int status =
      clEnqueueNDRangeKernel(queue, kernel_, 1, nullptr, &rounded, &local, 0, nullptr, nullptr);
  if (status != CL_SUCCESS)
    throw OpenClError(std::string("clEnqueueNDRangeKernel(") + name_ + ")", device_, status);
}

}  // namespace mt::kernels
