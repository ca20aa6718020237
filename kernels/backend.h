// The Backend contract: every numeric op a layer or optimizer needs, on one
// device. One instance per device; each layer holds the backend chosen for it.
// Memory management is every backend's; each numeric op has a default that
// throws UnsupportedOp, so a backend implements the ops it lists in
// SupportedOps() and placement (core/model) runs the others on the CPU.
// Ops a kernel file defines and registers itself are not methods here
// (kernels/op_table.h).
// Data moves between host and device only through Upload/Download, so a
// hidden synchronisation can never happen. All tensors are row-major float
// (NCHW for images); "count" arguments are in elements.
//
// Ops may run asynchronously on devices that queue work; Download and
// Synchronize wait for everything queued before them.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "kernels/activation.h"
#include "kernels/buffer.h"
#include "kernels/geometry.h"
#include "kernels/ops.h"

namespace mt::kernels {

struct SgdHyper {
  float lr = 0.01f;
  float momentum = 0.0f;
  float weight_decay = 0.0f;
};

struct AdamHyper {
  float lr = 0.001f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;
  int64_t step = 1;  // 1-based step number, for bias correction
};

// An op called on a backend that does not implement it (and so leaves it
// out of SupportedOps()).
struct UnsupportedOp : std::logic_error {
  using std::logic_error::logic_error;
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string Name() const = 0;
  // The ops this backend implements, listed by each backend. Callers place
  // work only on a backend that has every op the work uses (core/model falls
  // back to its home backend otherwise); an op outside the set throws
  // UnsupportedOp.
  virtual OpSet SupportedOps() const = 0;

  // ---- memory
  virtual std::unique_ptr<Buffer> Allocate(size_t count) = 0;
  virtual void Upload(const void* host, View dst) = 0;
  virtual void Download(View src, void* host) = 0;
  virtual void Copy(View src, View dst) = 0;
  virtual void Fill(View dst, float value) = 0;
  virtual void Synchronize() = 0;

  // ---- linear algebra
  // c = alpha * op(a) * op(b) + beta * c, with op(a) m x k, op(b) k x n,
  // c m x n, all row-major and densely packed.
  virtual void Gemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, View a, View b,
                    float beta, View c) {
    Unsupported(Op::kGemm);
  }
  // y += alpha * x
  virtual void Axpy(float alpha, View x, View y) { Unsupported(Op::kAxpy); }
  virtual void Scale(float alpha, View x) { Unsupported(Op::kScale); }

  // ---- convolution (im2col + GEMM, direct or depthwise kernels; workspace
  // from ConvWorkspaceCount, allocated once per batch size by the caller).
  // g.groups > 1 (grouped or depthwise) needs Op::kGroupedConv2d.
  // 0 on a backend without convolutions.
  virtual size_t ConvWorkspaceCount(const ConvGeometry& g) const { return 0; }
  // out = conv(in, weight) + bias; weight is [out_c][in_c / groups][k][k],
  // bias [out_c]. An empty bias means none is added.
  virtual void Conv2dForward(const ConvGeometry& g, View in, View weight, View bias, View out,
                             View workspace) {
    Unsupported(Op::kConv2dForward);
  }
  // Overwrites d_weight and d_bias with the gradients summed over the batch;
  // computes d_in unless it is empty (the first layer needs no input gradient).
  // An empty d_bias (no bias) is left alone. An empty d_weight (a frozen
  // layer) skips the weight and the bias gradients: only d_in is computed.
  virtual void Conv2dBackward(const ConvGeometry& g, View in, View weight, View d_out, View d_in,
                              View d_weight, View d_bias, View workspace) {
    Unsupported(Op::kConv2dBackward);
  }

  // ---- pooling (max). argmax holds int32 flat input indices per output.
  virtual void MaxPoolForward(const PoolGeometry& g, View in, View out, View argmax) {
    Unsupported(Op::kMaxPoolForward);
  }
  // Overwrites d_in.
  virtual void MaxPoolBackward(const PoolGeometry& g, View d_out, View argmax, View d_in) {
    Unsupported(Op::kMaxPoolBackward);
  }

  // ---- pooling (average, no padding) and global average pooling
  virtual void AvgPoolForward(const PoolGeometry& g, View in, View out) {
    Unsupported(Op::kAvgPoolForward);
  }
  // Overwrites d_in: each output's gradient spread evenly over its window.
  virtual void AvgPoolBackward(const PoolGeometry& g, View d_out, View d_in) {
    Unsupported(Op::kAvgPoolBackward);
  }
  // out[p] = mean of in[p][0..inner) for `planes` rows ([n][c][inner] -> [n][c]).
  virtual void GlobalAvgPoolForward(View in, View out, int planes, int inner) {
    Unsupported(Op::kGlobalAvgPoolForward);
  }
  // d_in[p][i] = d_out[p] / inner (overwrites).
  virtual void GlobalAvgPoolBackward(View d_out, View d_in, int planes, int inner) {
    Unsupported(Op::kGlobalAvgPoolBackward);
  }

  // ---- batch normalisation, per channel of x [batch][channels][inner];
  // scale, shift, the running statistics and the saved ones are [channels].
  // Training: normalises with the batch's mean and (biased) variance, saves
  // the mean and 1 / sqrt(var + eps) for the backward pass, and moves the
  // running statistics towards the batch's (the variance unbiased, as PyTorch).
  virtual void BatchNormForwardTraining(const BatchNormGeometry& g, View x, View scale, View shift,
                                        View running_mean, View running_var, View save_mean,
                                        View save_invstd, View y) {
    Unsupported(Op::kBatchNormForwardTraining);
  }
  // Evaluation, or a frozen layer: the running statistics, a fixed affine
  // map. Writes save_invstd for the backward pass of a frozen layer.
  virtual void BatchNormForwardInference(const BatchNormGeometry& g, View x, View scale, View shift,
                                         View running_mean, View running_var, View save_invstd,
                                         View y) {
    Unsupported(Op::kBatchNormForwardInference);
  }
  // batch_stats: the forward pass used the batch's statistics (save_mean,
  // save_invstd), so d_x includes their dependence on x; otherwise
  // d_x = d_y * scale * invstd with save_mean the running mean. Overwrites
  // d_scale, d_shift and d_x; skips each that is an empty view.
  virtual void BatchNormBackward(const BatchNormGeometry& g, View x, View d_y, View scale,
                                 View save_mean, View save_invstd, bool batch_stats, View d_x,
                                 View d_scale, View d_shift) {
    Unsupported(Op::kBatchNormBackward);
  }

  // ---- elementwise and reductions
  // x[o][c][i] += bias[c] for x shaped [outer][channels][inner].
  virtual void AddBias(View x, View bias, int outer, int channels, int inner) {
    Unsupported(Op::kAddBias);
  }
  // d_bias[c] = sum over o, i of d_x[o][c][i] (overwrites).
  virtual void BiasGrad(View d_x, View d_bias, int outer, int channels, int inner) {
    Unsupported(Op::kBiasGrad);
  }
  virtual void ReluForward(View in, View out) { Unsupported(Op::kReluForward); }
  // d_in = d_out where out > 0, else 0. In-place (d_in == d_out) is allowed.
  virtual void ReluBackward(View out, View d_out, View d_in) { Unsupported(Op::kReluBackward); }
  // out = min(max(in, lo), hi) (ReLU6: lo 0, hi 6).
  virtual void ClipForward(View in, View out, float lo, float hi) { Unsupported(Op::kClipForward); }
  // d_in = d_out where lo < out < hi, else 0. In-place (d_in == d_out) is allowed.
  virtual void ClipBackward(View out, View d_out, View d_in, float lo, float hi) {
    Unsupported(Op::kClipBackward);
  }
  // out = f(in) for an activation of kernels/activation.h.
  virtual void ActivationForward(Activation f, const ActivationParams& p, View in, View out) {
    Unsupported(Op::kActivationForward);
  }
  // d_in = d_out * f'(in) (the input, not the output: out may be overwritten
  // by an in-place layer after it). In-place (d_in == d_out) is allowed.
  virtual void ActivationBackward(Activation f, const ActivationParams& p, View in, View d_out,
                                  View d_in) {
    Unsupported(Op::kActivationBackward);
  }
  // out = in * mask / (1 - rate), mask drawn from a counter-based hash of
  // (seed, index) so every backend draws the same mask. mask holds 0 or 1.
  virtual void DropoutForward(View in, View out, View mask, float rate, uint64_t seed) {
    Unsupported(Op::kDropoutForward);
  }
  virtual void DropoutBackward(View d_out, View mask, float rate, View d_in) {
    Unsupported(Op::kDropoutBackward);
  }
  // Softmax cross-entropy over logits [n][classes] with int32 labels [n].
  // Writes d_logits = (softmax - onehot) / n (the gradient of the mean loss)
  // and returns the summed (not mean) loss over the n samples.
  virtual double SoftmaxCrossEntropy(View logits, View labels, int n, int classes, View d_logits) {
    Unsupported(Op::kSoftmaxCrossEntropy);
  }
  // Writes predicted class (int32) per row of logits [n][classes].
  virtual void ArgmaxRows(View logits, int n, int classes, View out) {
    Unsupported(Op::kArgmaxRows);
  }

  // ---- optimizer updates (the same code on the hub's master copy and on
  // every worker, so all copies stay bit-identical on one backend)
  virtual void SgdUpdate(const SgdHyper& h, View params, View grads, View velocity) {
    Unsupported(Op::kSgdUpdate);
  }
  virtual void AdamUpdate(const AdamHyper& h, View params, View grads, View m, View v) {
    Unsupported(Op::kAdamUpdate);
  }

 protected:
  [[noreturn]] void Unsupported(Op op) const {
    throw UnsupportedOp("backend " + Name() + " does not implement " + OpName(op) +
                        " (it is not in its SupportedOps(); placement runs such work on the CPU)");
  }
};

}  // namespace mt::kernels
