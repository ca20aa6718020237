// InterceptingBackend<Base>: a real backend (CpuBackend, OpenClBackend)
// whose every numeric op goes through Intercept(ops, views, call), which a
// test backend overrides: LimitedBackend (test_backends.h) refuses ops,
// the op bench (tests/bench/backend_ops_bench.cc) times them. Every op of
// kernels::Backend is here (LimitedBackendGuardsEveryOp checks it); a table
// op (kernels/op_table.h) is guarded by SupportedOps() alone, which the op
// table checks before each call.
#pragma once

#include <functional>
#include <initializer_list>
#include <utility>

#include "kernels/backend.h"

namespace mt::test_support {

template <class Base>
class InterceptingBackend : public Base {
 public:
  using View = kernels::View;
  using Op = kernels::Op;
  using OpSet = kernels::OpSet;

  template <class... BaseArgs>
  explicit InterceptingBackend(BaseArgs&&... args) : Base(std::forward<BaseArgs>(args)...) {}

  void Gemm(bool ta, bool tb, int m, int n, int k, float alpha, View a, View b, float beta,
            View c) override {
    Intercept({Op::kGemm}, {a, b, c}, [&] { Base::Gemm(ta, tb, m, n, k, alpha, a, b, beta, c); });
  }
  void Axpy(float alpha, View x, View y) override {
    Intercept({Op::kAxpy}, {x, y}, [&] { Base::Axpy(alpha, x, y); });
  }
  void Scale(float alpha, View x) override {
    Intercept({Op::kScale}, {x}, [&] { Base::Scale(alpha, x); });
  }
  void Conv2dForward(const kernels::ConvGeometry& g, View in, View w, View bias, View out,
                     View ws) override {
    Intercept(Grouped(Op::kConv2dForward, g), {in, w, bias, out, ws},
              [&] { Base::Conv2dForward(g, in, w, bias, out, ws); });
  }
  void Conv2dBackward(const kernels::ConvGeometry& g, View in, View w, View d_out, View d_in,
                      View d_w, View d_b, View ws) override {
    Intercept(Grouped(Op::kConv2dBackward, g), {in, w, d_out, d_in, d_w, d_b, ws},
              [&] { Base::Conv2dBackward(g, in, w, d_out, d_in, d_w, d_b, ws); });
  }
  void MaxPoolForward(const kernels::PoolGeometry& g, View in, View out, View argmax) override {
    Intercept(Padded(Op::kMaxPoolForward, g), {in, out, argmax},
              [&] { Base::MaxPoolForward(g, in, out, argmax); });
  }
  void MaxPoolBackward(const kernels::PoolGeometry& g, View d_out, View argmax,
                       View d_in) override {
    Intercept(Padded(Op::kMaxPoolBackward, g), {d_out, argmax, d_in},
              [&] { Base::MaxPoolBackward(g, d_out, argmax, d_in); });
  }
  void AvgPoolForward(const kernels::PoolGeometry& g, View in, View out) override {
    Intercept(Padded(Op::kAvgPoolForward, g), {in, out}, [&] { Base::AvgPoolForward(g, in, out); });
  }
  void AvgPoolBackward(const kernels::PoolGeometry& g, View d_out, View d_in) override {
    Intercept(Padded(Op::kAvgPoolBackward, g), {d_out, d_in},
              [&] { Base::AvgPoolBackward(g, d_out, d_in); });
  }
  void GlobalAvgPoolForward(View in, View out, int planes, int inner) override {
    Intercept({Op::kGlobalAvgPoolForward}, {in, out},
              [&] { Base::GlobalAvgPoolForward(in, out, planes, inner); });
  }
  void GlobalAvgPoolBackward(View d_out, View d_in, int planes, int inner) override {
    Intercept({Op::kGlobalAvgPoolBackward}, {d_out, d_in},
              [&] { Base::GlobalAvgPoolBackward(d_out, d_in, planes, inner); });
  }
  void BatchNormForwardTraining(const kernels::BatchNormGeometry& g, View x, View scale, View shift,
                                View running_mean, View running_var, View save_mean,
                                View save_invstd, View y) override {
    Intercept({Op::kBatchNormForwardTraining},
              {x, scale, shift, running_mean, running_var, save_mean, save_invstd, y}, [&] {
                Base::BatchNormForwardTraining(g, x, scale, shift, running_mean, running_var,
                                               save_mean, save_invstd, y);
              });
  }
  void BatchNormForwardInference(const kernels::BatchNormGeometry& g, View x, View scale,
                                 View shift, View running_mean, View running_var, View save_invstd,
                                 View y) override {
    Intercept({Op::kBatchNormForwardInference},
              {x, scale, shift, running_mean, running_var, save_invstd, y}, [&] {
                Base::BatchNormForwardInference(g, x, scale, shift, running_mean, running_var,
                                                save_invstd, y);
              });
  }
  void BatchNormBackward(const kernels::BatchNormGeometry& g, View x, View d_y, View scale,
                         View save_mean, View save_invstd, bool batch_stats, View d_x, View d_scale,
                         View d_shift) override {
    Intercept({Op::kBatchNormBackward},
              {x, d_y, scale, save_mean, save_invstd, d_x, d_scale, d_shift}, [&] {
                Base::BatchNormBackward(g, x, d_y, scale, save_mean, save_invstd, batch_stats, d_x,
                                        d_scale, d_shift);
              });
  }
  void ClipForward(View in, View out, float lo, float hi) override {
    Intercept({Op::kClipForward}, {in, out}, [&] { Base::ClipForward(in, out, lo, hi); });
  }
  void ClipBackward(View out, View d_out, View d_in, float lo, float hi) override {
    Intercept({Op::kClipBackward}, {out, d_out, d_in},
              [&] { Base::ClipBackward(out, d_out, d_in, lo, hi); });
  }
  void ActivationForward(kernels::Activation f, const kernels::ActivationParams& p, View in,
                         View out) override {
    Intercept({Op::kActivationForward}, {in, out}, [&] { Base::ActivationForward(f, p, in, out); });
  }
  void ActivationBackward(kernels::Activation f, const kernels::ActivationParams& p, View in,
                          View d_out, View d_in) override {
    Intercept({Op::kActivationBackward}, {in, d_out, d_in},
              [&] { Base::ActivationBackward(f, p, in, d_out, d_in); });
  }
  void AddBias(View x, View bias, int outer, int channels, int inner) override {
    Intercept({Op::kAddBias}, {x, bias}, [&] { Base::AddBias(x, bias, outer, channels, inner); });
  }
  void BiasGrad(View d_x, View d_bias, int outer, int channels, int inner) override {
    Intercept({Op::kBiasGrad}, {d_x, d_bias},
              [&] { Base::BiasGrad(d_x, d_bias, outer, channels, inner); });
  }
  void ReluForward(View in, View out) override {
    Intercept({Op::kReluForward}, {in, out}, [&] { Base::ReluForward(in, out); });
  }
  void ReluBackward(View out, View d_out, View d_in) override {
    Intercept({Op::kReluBackward}, {out, d_out, d_in},
              [&] { Base::ReluBackward(out, d_out, d_in); });
  }
  void DropoutForward(View in, View out, View mask, float rate, uint64_t seed) override {
    Intercept({Op::kDropoutForward}, {in, out, mask},
              [&] { Base::DropoutForward(in, out, mask, rate, seed); });
  }
  void DropoutBackward(View d_out, View mask, float rate, View d_in) override {
    Intercept({Op::kDropoutBackward}, {d_out, mask, d_in},
              [&] { Base::DropoutBackward(d_out, mask, rate, d_in); });
  }
  double SoftmaxCrossEntropy(View logits, View labels, int n, int classes, View d_logits) override {
    double loss = 0;
    Intercept({Op::kSoftmaxCrossEntropy}, {logits, labels, d_logits},
              [&] { loss = Base::SoftmaxCrossEntropy(logits, labels, n, classes, d_logits); });
    return loss;
  }
  void ArgmaxRows(View logits, int n, int classes, View out) override {
    Intercept({Op::kArgmaxRows}, {logits, out}, [&] { Base::ArgmaxRows(logits, n, classes, out); });
  }
  void SgdUpdate(const kernels::SgdHyper& h, View p, View g, View velocity) override {
    Intercept({Op::kSgdUpdate}, {p, g, velocity}, [&] { Base::SgdUpdate(h, p, g, velocity); });
  }
  void AdamUpdate(const kernels::AdamHyper& h, View p, View g, View m, View v) override {
    Intercept({Op::kAdamUpdate}, {p, g, m, v}, [&] { Base::AdamUpdate(h, p, g, m, v); });
  }

 protected:
  // `ops`: the op called (and kGroupedConv2d for a grouped conv); `views`:
  // the memory it gets; `call` runs it on Base.
  virtual void Intercept(OpSet ops, std::initializer_list<View> views,
                         const std::function<void()>& call) {
    call();
  }

 private:
  static OpSet Grouped(Op op, const kernels::ConvGeometry& g) {
    return g.groups > 1 ? OpSet{op, Op::kGroupedConv2d} : OpSet{op};
  }
  static OpSet Padded(Op op, const kernels::PoolGeometry& g) {
    return g.pad > 0 ? OpSet{op, Op::kPaddedPool} : OpSet{op};
  }
};

}  // namespace mt::test_support
