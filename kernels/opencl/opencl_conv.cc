// Convolution, pooling and bias on the OpenCL backend. A conv runs over
// groups of samples: im2col of the group, one CLBlast GEMM, and a gather into
// NCHW. The group is as many samples as fit in the workspace cap, so the
// workspace stays bounded for big inputs and the launches few for small ones.
#include <algorithm>

#include "kernels/opencl/opencl_backend.h"

namespace mt::kernels {
namespace {

// 16 MiB of floats: big enough for a whole LeNet batch in one group.
constexpr size_t kConvWorkspaceCap = size_t{4} << 20;

size_t ColumnFloats(const ConvGeometry& g) {
  return static_cast<size_t>(g.patch()) * g.out_h() * g.out_w();
}
size_t ChannelMajorFloats(const ConvGeometry& g) {
  return static_cast<size_t>(g.out_c) * g.out_h() * g.out_w();
}

// Samples per group for this geometry.
int GroupSize(const ConvGeometry& g) {
  const size_t per_sample = ColumnFloats(g) + ChannelMajorFloats(g);
  const size_t fit = std::max<size_t>(1, kConvWorkspaceCap / per_sample);
  return static_cast<int>(std::min<size_t>(fit, static_cast<size_t>(std::max(g.batch, 1))));
}

}  // namespace

size_t OpenClBackend::ConvWorkspaceCount(const ConvGeometry& g) const {
  if (g.groups > 1) return 0;  // direct kernels, no columns
  return static_cast<size_t>(GroupSize(g)) * (ColumnFloats(g) + ChannelMajorFloats(g));
}

void OpenClBackend::Conv2dForward(const ConvGeometry& g, View in, View weight, View bias, View out,
                                  View workspace) {
  if (g.groups > 1) return GroupedConv2dForward(g, in, weight, bias, out);
  const int group = GroupSize(g), hw = g.out_h() * g.out_w();
  for (int first = 0; first < g.batch; first += group) {
    const int n = std::min(group, g.batch - first);
    const View col = workspace.Slice(0, ColumnFloats(g) * n);
    const View cm = workspace.Slice(ColumnFloats(g) * group, ChannelMajorFloats(g) * n);
    Call("im2col_group")
        .Arg(in)
        .Arg(col)
        .Arg(g.in_c)
        .Arg(g.in_h)
        .Arg(g.in_w)
        .Arg(g.kernel)
        .Arg(g.stride)
        .Arg(g.pad)
        .Arg(g.out_h())
        .Arg(g.out_w())
        .Arg(first)
        .Arg(n)
        .Run(queue(), ColumnFloats(g) * n);
    Gemm(false, false, g.out_c, n * hw, g.patch(), 1.0f, weight, col, 0.0f, cm);
    Call("nchw_from_channel_major")
        .Arg(cm)
        .Arg(out)
        .Arg(bias)
        .Arg(bias.empty() ? 0 : 1)
        .Arg(g.out_c)
        .Arg(hw)
        .Arg(first)
        .Arg(n)
        .Run(queue(), ChannelMajorFloats(g) * n);
  }
}

void OpenClBackend::Conv2dBackward(const ConvGeometry& g, View in, View weight, View d_out,
                                   View d_in, View d_weight, View d_bias, View workspace) {
  if (g.groups > 1) return GroupedConv2dBackward(g, in, weight, d_out, d_in, d_weight, d_bias);
  if (d_weight.empty()) d_bias = View{};  // frozen: only d_in
  if (d_weight.empty() && d_in.empty()) return;
  const int group = GroupSize(g), hw = g.out_h() * g.out_w();
  for (int first = 0; first < g.batch; first += group) {
    const int n = std::min(group, g.batch - first);
    const View col = workspace.Slice(0, ColumnFloats(g) * n);
    const View cm = workspace.Slice(ColumnFloats(g) * group, ChannelMajorFloats(g) * n);
    Call("channel_major_from_nchw")
        .Arg(d_out)
        .Arg(cm)
        .Arg(g.out_c)
        .Arg(hw)
        .Arg(first)
        .Arg(n)
        .Run(queue(), ChannelMajorFloats(g) * n);
    if (!d_weight.empty()) {
      Call("im2col_group")
          .Arg(in)
          .Arg(col)
          .Arg(g.in_c)
          .Arg(g.in_h)
          .Arg(g.in_w)
          .Arg(g.kernel)
          .Arg(g.stride)
          .Arg(g.pad)
          .Arg(g.out_h())
          .Arg(g.out_w())
          .Arg(first)
          .Arg(n)
          .Run(queue(), ColumnFloats(g) * n);
      // d_weight (+)= d_out_cm [out_c x n*hw] * col^T [n*hw x patch]
      Gemm(false, true, g.out_c, g.patch(), n * hw, 1.0f, cm, col, first == 0 ? 0.0f : 1.0f,
           d_weight);
    }
    if (!d_in.empty()) {
      // d_col = W^T [patch x out_c] * d_out_cm [out_c x n*hw], then scattered back as a gather.
      Gemm(true, false, g.patch(), n * hw, g.out_c, 1.0f, weight, cm, 0.0f, col);
      Call("col2im_group")
          .Arg(col)
          .Arg(d_in)
          .Arg(g.in_c)
          .Arg(g.in_h)
          .Arg(g.in_w)
          .Arg(g.kernel)
          .Arg(g.stride)
          .Arg(g.pad)
          .Arg(g.out_h())
          .Arg(g.out_w())
          .Arg(first)
          .Arg(n)
          .Run(queue(), static_cast<size_t>(n) * g.in_size());
    }
  }
  if (!d_bias.empty()) BiasGrad(d_out, d_bias, g.batch, g.out_c, hw);
}

void OpenClBackend::MaxPoolForward(const PoolGeometry& g, View in, View out, View argmax) {
  // No padded kernel here (the op is left out of SupportedOps()).
  if (g.pad > 0) Unsupported(Op::kPaddedPool);
  const int planes = g.batch * g.channels;
  Call("maxpool_forward")
      .Arg(in)
      .Arg(out)
      .Arg(argmax)
      .Arg(planes)
      .Arg(g.in_h)
      .Arg(g.in_w)
      .Arg(g.size)
      .Arg(g.stride)
      .Arg(g.out_h())
      .Arg(g.out_w())
      .Run(queue(), static_cast<size_t>(planes) * g.out_h() * g.out_w());
}

void OpenClBackend::MaxPoolBackward(const PoolGeometry& g, View d_out, View argmax, View d_in) {
  // No padded kernel here (the op is left out of SupportedOps()).
  if (g.pad > 0) Unsupported(Op::kPaddedPool);
  const int planes = g.batch * g.channels;
  Call("maxpool_backward")
      .Arg(d_out)
      .Arg(argmax)
      .Arg(d_in)
      .Arg(planes)
      .Arg(g.in_h)
      .Arg(g.in_w)
      .Arg(g.size)
      .Arg(g.stride)
      .Arg(g.out_h())
      .Arg(g.out_w())
      .Run(queue(), static_cast<size_t>(planes) * g.in_h * g.in_w);
}

void OpenClBackend::AddBias(View x, View bias, int outer, int channels, int inner) {
  const int total = outer * channels * inner;
  Call("add_bias").Arg(x).Arg(bias).Arg(channels).Arg(inner).Arg(total).Run(queue(), total);
}

void OpenClBackend::BiasGrad(View d_x, View d_bias, int outer, int channels, int inner) {
  Call("bias_grad").Arg(d_x).Arg(d_bias).Arg(outer).Arg(channels).Arg(inner).Run(queue(), channels);
}

}  // namespace mt::kernels
