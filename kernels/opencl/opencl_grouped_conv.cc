// Grouped and depthwise convolution on the OpenCL backend: one direct gather
// kernel each for the output, the input gradient and the weight gradient
// (cl/grouped_conv.cl); the bias gradient is BiasGrad's.
#include "kernels/opencl/opencl_backend.h"

namespace mt::kernels {

void OpenClBackend::GroupedConv2dForward(const ConvGeometry& g, View in, View weight, View bias,
                                         View out) {
  const size_t outputs = static_cast<size_t>(g.batch) * g.out_size();
  if (outputs == 0) return;
  Call("grouped_conv_forward")
      .Arg(in)
      .Arg(weight)
      .Arg(bias)
      .Arg(bias.empty() ? 0 : 1)
      .Arg(out)
      .Arg(g.batch)
      .Arg(g.in_c)
      .Arg(g.in_h)
      .Arg(g.in_w)
      .Arg(g.out_c)
      .Arg(g.kernel)
      .Arg(g.stride)
      .Arg(g.pad)
      .Arg(g.out_h())
      .Arg(g.out_w())
      .Arg(g.groups)
      .Run(queue(), outputs);
}

void OpenClBackend::GroupedConv2dBackward(const ConvGeometry& g, View in, View weight, View d_out,
                                          View d_in, View d_weight, View d_bias) {
  if (!d_in.empty() && g.batch > 0) {
    Call("grouped_conv_backward_input")
        .Arg(d_out)
        .Arg(weight)
        .Arg(d_in)
        .Arg(g.batch)
        .Arg(g.in_c)
        .Arg(g.in_h)
        .Arg(g.in_w)
        .Arg(g.out_c)
        .Arg(g.kernel)
        .Arg(g.stride)
        .Arg(g.pad)
        .Arg(g.out_h())
        .Arg(g.out_w())
        .Arg(g.groups)
        .Run(queue(), static_cast<size_t>(g.batch) * g.in_size());
  }
  // No d_weight (a frozen layer): no weight or bias gradient.
  if (d_weight.empty()) return;
  Call("grouped_conv_backward_weight")
      .Arg(in)
      .Arg(d_out)
      .Arg(d_weight)
      .Arg(g.batch)
      .Arg(g.in_c)
      .Arg(g.in_h)
      .Arg(g.in_w)
      .Arg(g.out_c)
      .Arg(g.kernel)
      .Arg(g.stride)
      .Arg(g.pad)
      .Arg(g.out_h())
      .Arg(g.out_w())
      .Arg(g.groups)
      .Run(queue(), static_cast<size_t>(g.weight_count()));
  if (!d_bias.empty()) BiasGrad(d_out, d_bias, g.batch, g.out_c, g.out_h() * g.out_w());
}

}  // namespace mt::kernels
