// Elementwise ops, the loss and the optimizer updates on the OpenCL backend.
#include <cmath>
#include <stdexcept>

#include "kernels/op_scalars.h"
#include "kernels/opencl/opencl_backend.h"

namespace mt::kernels {

void OpenClBackend::ReluForward(View in, View out) {
  const int n = static_cast<int>(in.count);
  Call("relu_forward").Arg(in).Arg(out).Arg(n).Run(queue(), n);
}

void OpenClBackend::ReluBackward(View out, View d_out, View d_in) {
  const int n = static_cast<int>(out.count);
  Call("relu_backward").Arg(out).Arg(d_out).Arg(d_in).Arg(n).Run(queue(), n);
}

void OpenClBackend::DropoutForward(View in, View out, View mask, float rate, uint64_t seed) {
  const int n = static_cast<int>(in.count);
  Call("dropout_forward")
      .Arg(in)
      .Arg(out)
      .Arg(mask)
      .Arg(rate)
      .Arg(DropoutScale(rate))
      .Arg(seed)
      .Arg(n)
      .Run(queue(), n);
}

void OpenClBackend::DropoutBackward(View d_out, View mask, float rate, View d_in) {
  const int n = static_cast<int>(d_out.count);
  Call("dropout_backward")
      .Arg(d_out)
      .Arg(mask)
      .Arg(DropoutScale(rate))
      .Arg(d_in)
      .Arg(n)
      .Run(queue(), n);
}

double OpenClBackend::SoftmaxCrossEntropy(View logits, View labels, int n, int classes,
                                          View d_logits) {
  if (n <= 0) return 0.0;
  if (!row_loss_ || row_loss_->count() < static_cast<size_t>(n)) {
    row_loss_ = Allocate(static_cast<size_t>(n));
    row_loss_host_.resize(n);
  }
  const View losses{row_loss_.get(), 0, static_cast<size_t>(n)};
  Call("softmax_xent")
      .Arg(logits)
      .Arg(labels)
      .Arg(d_logits)
      .Arg(losses)
      .Arg(n)
      .Arg(classes)
      .Arg(MeanScale(n))
      .Run(queue(), n);
  Download(losses, row_loss_host_.data());
  double loss = 0.0;
  for (int r = 0; r < n; ++r) {
    if (std::isnan(row_loss_host_[r]))
      throw std::out_of_range("SoftmaxCrossEntropy: label of row " + std::to_string(r) +
                              " outside [0, " + std::to_string(classes) + ")");
    loss += row_loss_host_[r];
  }
  return loss;
}

void OpenClBackend::ArgmaxRows(View logits, int n, int classes, View out) {
  Call("argmax_rows").Arg(logits).Arg(out).Arg(n).Arg(classes).Run(queue(), n);
}

void OpenClBackend::SgdUpdate(const SgdHyper& h, View params, View grads, View velocity) {
  const int n = static_cast<int>(params.count);
  Call("sgd_update")
      .Arg(params)
      .Arg(grads)
      .Arg(velocity)
      .Arg(h.lr)
      .Arg(h.momentum)
      .Arg(h.weight_decay)
      .Arg(n)
      .Run(queue(), n);
}

void OpenClBackend::AdamUpdate(const AdamHyper& h, View params, View grads, View m, View v) {
  const int n = static_cast<int>(params.count);
  const AdamCorrection c = AdamBiasCorrection(h);
  Call("adam_update")
      .Arg(params)
      .Arg(grads)
      .Arg(m)
      .Arg(v)
      .Arg(h.beta1)
      .Arg(h.beta2)
      .Arg(h.eps)
      .Arg(h.weight_decay)
      .Arg(c.step_size)
      .Arg(c.c2_sqrt)
      .Arg(n)
      .Run(queue(), n);
}

}  // namespace mt::kernels
