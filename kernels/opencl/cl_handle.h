// Owning wrappers for OpenCL handles (after CLBlast's clpp11.hpp): moved,
// never copied, released exactly once. Release errors are ignored because
// destructors never throw and there is nothing left to do about them.
#pragma once

#include "kernels/opencl/cl_error.h"

namespace mt::kernels {

template <class T, cl_int (*Release)(T)>
class ClHandle {
 public:
  ClHandle() = default;
  explicit ClHandle(T handle) : handle_(handle) {}
  ~ClHandle() { Reset(); }
  ClHandle(const ClHandle&) = delete;
  ClHandle& operator=(const ClHandle&) = delete;
  ClHandle(ClHandle&& other) noexcept : handle_(other.handle_) { other.handle_ = nullptr; }
  ClHandle& operator=(ClHandle&& other) noexcept {
    if (this != &other) {
      Reset();
      handle_ = other.handle_;
      other.handle_ = nullptr;
    }
    return *this;
  }

  T get() const { return handle_; }
  // For APIs that take a pointer to the handle (CLBlast takes the queue so).
  T* ptr() { return &handle_; }
  explicit operator bool() const { return handle_ != nullptr; }
  void Reset() {
    if (handle_) Release(handle_);
    handle_ = nullptr;
  }

 private:
  T handle_ = nullptr;
};

using ClContext = ClHandle<cl_context, clReleaseContext>;
using ClQueue = ClHandle<cl_command_queue, clReleaseCommandQueue>;
using ClProgram = ClHandle<cl_program, clReleaseProgram>;
using ClKernel = ClHandle<cl_kernel, clReleaseKernel>;
using ClMem = ClHandle<cl_mem, clReleaseMemObject>;
using ClEvent = ClHandle<cl_event, clReleaseEvent>;

}  // namespace mt::kernels
