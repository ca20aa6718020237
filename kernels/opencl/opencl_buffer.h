// Device memory for the OpenCL backend: one cl_mem per buffer. Views address
// it by element offset, passed to kernels as an argument (sub-buffers would
// need aligned offsets).
#pragma once

#include "kernels/buffer.h"
#include "kernels/opencl/cl_handle.h"

namespace mt::kernels {

class OpenClBuffer : public Buffer {
 public:
  OpenClBuffer(Backend* backend, size_t count, ClMem mem)
      : Buffer(backend, count), mem_(std::move(mem)) {}
  cl_mem mem() const { return mem_.get(); }

 private:
  ClMem mem_;
};

}  // namespace mt::kernels
