// OpenCL failures as exceptions that name the failing call and the device,
// so a user's report says what broke where ("clBuildProgram on NVIDIA H100:
// CL_BUILD_PROGRAM_FAILURE (-11)").
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <CL/cl_ext.h>

#include <stdexcept>
#include <string>

namespace mt::kernels {

class OpenClError : public std::runtime_error {
 public:
  OpenClError(const std::string& call, const std::string& device, cl_int status);
  cl_int status() const { return status_; }

 private:
  cl_int status_;
};

// "CL_OUT_OF_RESOURCES" for -5, and so on; "unknown OpenCL error" otherwise.
const char* ClErrorName(cl_int status);

inline void ClCheck(cl_int status, const char* call, const std::string& device) {
  if (status != CL_SUCCESS) throw OpenClError(call, device, status);
}

}  // namespace mt::kernels
