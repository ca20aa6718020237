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
// does an op given another backend's memory. It guards every numeric op of
// kernels::Backend (LimitedBackendGuardsEveryOp in the kernels tests checks
// that by calling each).
template <class Base>
class LimitedBackend : public Base {
 public:
  using View = kernels::View;
  using Op = kernels::Op;

  template <class... BaseArgs>
  LimitedBackend(std::string name, kernels::OpSet missing, BaseArgs&&... args)
      : Base(std::forward<BaseArgs>(args)...), name_(std::move(name)), missing_(missing) {}

  std::string Name() const override { return name_; }
  kernels::OpSet SupportedOps() const override { return Base::SupportedOps() - missing_; }

  void Gemm(bool ta, bool tb, int m, int n, int k, float alpha, View a, View b, float beta,
            View c) override {
    Require(Op::kGemm, {a, b, c});
    Base::Gemm(ta, tb, m, n, k, alpha, a, b, beta, c);
  }
  void Axpy(float alpha, View x, View y) override {
    Require(Op::kAxpy, {x, y});
    Base::Axpy(alpha, x, y);
  }
  void Scale(float alpha, View x) override {
    Require(Op::kScale, {x});
    Base::Scale(alpha, x);
  }
  void Conv2dForward(const kernels::ConvGeometry& g, View in, View w, View bias, View out,
                     View ws) override {
    Require(Op::kConv2dForward, {in, w, bias, out, ws});
    if (g.groups > 1) Require(Op::kGroupedConv2d, {});
    Base::Conv2dForward(g, in, w, bias, out, ws);
  }
  void Conv2dBackward(const kernels::ConvGeometry& g, View in, View w, View d_out, View d_in,
                      View d_w, View d_b, View ws) override {
    Require(Op::kConv2dBackward, {in, w, d_out, d_in, d_w, d_b, ws});
    if (g.groups > 1) Require(Op::kGroupedConv2d, {});
    Base::Conv2dBackward(g, in, w, d_out, d_in, d_w, d_b, ws);
  }
  void MaxPoolForward(const kernels::PoolGeometry& g, View in, View out, View argmax) override {
    Require(Op::kMaxPoolForward, {in, out, argmax});
    Base::MaxPoolForward(g, in, out, argmax);
  }
  void MaxPoolBackward(const kernels::PoolGeometry& g, View d_out, View argmax,
                       View d_in) override {
    Require(Op::kMaxPoolBackward, {d_out, argmax, d_in});
    Base::MaxPoolBackward(g, d_out, argmax, d_in);
  }
  void AvgPoolForward(const kernels::PoolGeometry& g, View in, View out) override {
    Require(Op::kAvgPoolForward, {in, out});
    Base::AvgPoolForward(g, in, out);
  }
  void AvgPoolBackward(const kernels::PoolGeometry& g, View d_out, View d_in) override {
    Require(Op::kAvgPoolBackward, {d_out, d_in});
    Base::AvgPoolBackward(g, d_out, d_in);
  }
  void GlobalAvgPoolForward(View in, View out, int planes, int inner) override {
    Require(Op::kGlobalAvgPoolForward, {in, out});
    Base::GlobalAvgPoolForward(in, out, planes, inner);
  }
  void GlobalAvgPoolBackward(View d_out, View d_in, int planes, int inner) override {
    Require(Op::kGlobalAvgPoolBackward, {d_out, d_in});
    Base::GlobalAvgPoolBackward(d_out, d_in, planes, inner);
  }
  void BatchNormForwardTraining(const kernels::BatchNormGeometry& g, View x, View scale, View shift,
                                View running_mean, View running_var, View save_mean,
                                View save_invstd, View y) override {
    Require(Op::kBatchNormForwardTraining,
            {x, scale, shift, running_mean, running_var, save_mean, save_invstd, y});
    Base::BatchNormForwardTraining(g, x, scale, shift, running_mean, running_var, save_mean,
                                   save_invstd, y);
  }
  void BatchNormForwardInference(const kernels::BatchNormGeometry& g, View x, View scale,
                                 View shift, View running_mean, View running_var, View save_invstd,
                                 View y) override {
    Require(Op::kBatchNormForwardInference,
            {x, scale, shift, running_mean, running_var, save_invstd, y});
    Base::BatchNormForwardInference(g, x, scale, shift, running_mean, running_var, save_invstd, y);
  }
  void BatchNormBackward(const kernels::BatchNormGeometry& g, View x, View d_y, View scale,
                         View save_mean, View save_invstd, bool batch_stats, View d_x, View d_scale,
                         View d_shift) override {
    Require(Op::kBatchNormBackward, {x, d_y, scale, save_mean, save_invstd, d_x, d_scale, d_shift});
    Base::BatchNormBackward(g, x, d_y, scale, save_mean, save_invstd, batch_stats, d_x, d_scale,
                            d_shift);
  }
  void ClipForward(View in, View out, float lo, float hi) override {
    Require(Op::kClipForward, {in, out});
    Base::ClipForward(in, out, lo, hi);
  }
  void ClipBackward(View out, View d_out, View d_in, float lo, float hi) override {
    Require(Op::kClipBackward, {out, d_out, d_in});
    Base::ClipBackward(out, d_out, d_in, lo, hi);
  }
  void ActivationForward(kernels::Activation f, const kernels::ActivationParams& p, View in,
                         View out) override {
    Require(Op::kActivationForward, {in, out});
    Base::ActivationForward(f, p, in, out);
  }
  void ActivationBackward(kernels::Activation f, const kernels::ActivationParams& p, View in,
                          View d_out, View d_in) override {
    Require(Op::kActivationBackward, {in, d_out, d_in});
    Base::ActivationBackward(f, p, in, d_out, d_in);
  }
  void AddBias(View x, View bias, int outer, int channels, int inner) override {
    Require(Op::kAddBias, {x, bias});
    Base::AddBias(x, bias, outer, channels, inner);
  }
  void BiasGrad(View d_x, View d_bias, int outer, int channels, int inner) override {
    Require(Op::kBiasGrad, {d_x, d_bias});
    Base::BiasGrad(d_x, d_bias, outer, channels, inner);
  }
  void ReluForward(View in, View out) override {
    Require(Op::kReluForward, {in, out});
    Base::ReluForward(in, out);
  }
  void ReluBackward(View out, View d_out, View d_in) override {
    Require(Op::kReluBackward, {out, d_out, d_in});
    Base::ReluBackward(out, d_out, d_in);
  }
  void DropoutForward(View in, View out, View mask, float rate, uint64_t seed) override {
    Require(Op::kDropoutForward, {in, out, mask});
    Base::DropoutForward(in, out, mask, rate, seed);
  }
  void DropoutBackward(View d_out, View mask, float rate, View d_in) override {
    Require(Op::kDropoutBackward, {d_out, mask, d_in});
    Base::DropoutBackward(d_out, mask, rate, d_in);
  }
  double SoftmaxCrossEntropy(View logits, View labels, int n, int classes, View d_logits) override {
    Require(Op::kSoftmaxCrossEntropy, {logits, labels, d_logits});
    return Base::SoftmaxCrossEntropy(logits, labels, n, classes, d_logits);
  }
  void ArgmaxRows(View logits, int n, int classes, View out) override {
    Require(Op::kArgmaxRows, {logits, out});
    Base::ArgmaxRows(logits, n, classes, out);
  }
  void SgdUpdate(const kernels::SgdHyper& h, View p, View g, View velocity) override {
    Require(Op::kSgdUpdate, {p, g, velocity});
    Base::SgdUpdate(h, p, g, velocity);
  }
  void AdamUpdate(const kernels::AdamHyper& h, View p, View g, View m, View v) override {
    Require(Op::kAdamUpdate, {p, g, m, v});
    Base::AdamUpdate(h, p, g, m, v);
  }

 private:
  // Also checks that every view is of this backend's memory: on a CPU-based
  // backend a misplaced buffer would otherwise go unnoticed.
  void Require(Op op, std::initializer_list<View> views) const {
    if (missing_.Has(op))
      throw std::logic_error(name_ + ": " + kernels::OpName(op) +
                             " called, but this backend lacks it");
    for (const View& v : views)
      if (v.buffer && v.buffer->backend() != this)
        throw std::logic_error(name_ + ": " + kernels::OpName(op) + " given memory of " +
                               v.buffer->backend()->Name());
  }

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
