// Backends by name for parameterised tests: "cpu1", "cpu3" (the CPU backend
// with that many threads) and "opencl" (the default OpenCL device). Returns
// null for "opencl" when the build or the machine has no OpenCL; the test
// then skips with kNoOpenCl.
//
// LimitedBackend<Base>: a real backend that lacks some ops, for the code
// that must honour SupportedOps() (placement, the op table).
#pragma once

#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "kernels/cpu/cpu_backend.h"
#include "tests/support/intercepting_backend.h"
#if MT_HAVE_OPENCL
#include "kernels/opencl/opencl_backend.h"
#include "kernels/opencl/opencl_device.h"
#endif

namespace mt::test_support {

constexpr const char* kNoOpenCl = "no OpenCL platform on this machine (or a build without OpenCL)";

// Whether this build and machine have an OpenCL device, as mtworker
// --device opencl needs one.
inline bool HaveOpenCl() {
#if MT_HAVE_OPENCL
  return !kernels::ListOpenClDevices().empty();
#else
  return false;
#endif
}

inline std::unique_ptr<kernels::Backend> MakeTestBackend(const std::string& name) {
  if (name.rfind("cpu", 0) == 0)
    return std::make_unique<kernels::CpuBackend>(std::stoi(name.substr(3)));
#if MT_HAVE_OPENCL
  if (name == "opencl" && !kernels::ListOpenClDevices().empty())
    return std::make_unique<kernels::OpenClBackend>(kernels::DefaultOpenClDevice());
#endif
  return nullptr;
}

// Base (CpuBackend, OpenClBackend) without the ops in `missing`:
// SupportedOps leaves them out and calling one throws std::logic_error, so a
// caller that ignores SupportedOps() fails instead of quietly working; so
// does an op given another backend's memory. Every numeric op goes through
// it (intercepting_backend.h; LimitedBackendGuardsEveryOp checks each).
template <class Base>
class LimitedBackend : public InterceptingBackend<Base> {
 public:
  using View = kernels::View;

  template <class... BaseArgs>
  LimitedBackend(std::string name, kernels::OpSet missing, BaseArgs&&... args)
      : InterceptingBackend<Base>(std::forward<BaseArgs>(args)...),
        name_(std::move(name)),
        missing_(missing) {}

  std::string Name() const override { return name_; }
  kernels::OpSet SupportedOps() const override { return Base::SupportedOps() - missing_; }

 protected:
  // Also checks that every view is of this backend's memory: on a CPU-based
  // backend a misplaced buffer would otherwise go unnoticed.
  void Intercept(kernels::OpSet ops, std::initializer_list<View> views,
                 const std::function<void()>& call) override {
    const kernels::OpSet lacking = ops - (kernels::OpSet::All() - missing_);
    if (!lacking.empty())
      throw std::logic_error(name_ + ": " + lacking.Names() + " called, but this backend lacks it");
    for (const View& v : views)
      if (v.buffer && v.buffer->backend() != this)
        throw std::logic_error(name_ + ": " + ops.Names() + " given memory of " +
                               v.buffer->backend()->Name());
    call();
  }

 private:
  std::string name_;
  kernels::OpSet missing_;
};

// The CPU backend without `missing`, named `name` (so placements tell it
// from the real CPU backend).
inline std::unique_ptr<kernels::Backend> MakeCpuWithout(kernels::OpSet missing,
                                                        const std::string& name, int threads = 2) {
  return std::make_unique<LimitedBackend<kernels::CpuBackend>>(name, missing, threads);
}

}  // namespace mt::test_support
