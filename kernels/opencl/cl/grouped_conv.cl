// Grouped (and depthwise) convolution, computed directly: each group's
// channels are few, so there is no GEMM worth its im2col. Output channel o
// of group gi = o / opg reads input channels gi * cpg .. gi * cpg + cpg - 1;
// weights are [out_c][cpg][k][k]. Every kernel is a gather (one work item
// writes one element), so sums run in a fixed order and need no atomics.

__kernel void grouped_conv_forward(__global const float* in, int in_off, __global const float* w,
                                   int w_off, __global const float* bias, int bias_off,
                                   int has_bias, __global float* out, int out_off, int batch,
                                   int in_c, int h, int wd, int out_c, int k, int stride, int pad,
                                   int oh, int ow, int groups) {
  const int i = get_global_id(0);
  if (i >= batch * out_c * oh * ow) return;
  const int ox = i % ow, oy = (i / ow) % oh, o = (i / (ow * oh)) % out_c, n = i / (ow * oh * out_c);
  const int cpg = in_c / groups, opg = out_c / groups, c0 = (o / opg) * cpg;
  float sum = has_bias ? bias[bias_off + o] : 0.0f;
  for (int c = 0; c < cpg; ++c) {
    __global const float* plane = in + in_off + ((n * in_c + c0 + c) * h) * wd;
    __global const float* wk = w + w_off + (o * cpg + c) * k * k;
    for (int ky = 0; ky < k; ++ky) {
      const int y = oy * stride - pad + ky;
      if (y < 0 || y >= h) continue;
      for (int kx = 0; kx < k; ++kx) {
        const int x = ox * stride - pad + kx;
        if (x < 0 || x >= wd) continue;
        sum += plane[y * wd + x] * wk[ky * k + kx];
      }
    }
  }
  out[out_off + i] = sum;
}

// d_in[n][c][y][x] = sum over the outputs of c's group and the taps that
// read (y, x) of d_out * weight.
__kernel void grouped_conv_backward_input(__global const float* d_out, int dy_off,
                                          __global const float* w, int w_off,
                                          __global float* d_in, int dx_off, int batch, int in_c,
                                          int h, int wd, int out_c, int k, int stride, int pad,
                                          int oh, int ow, int groups) {
  const int i = get_global_id(0);
  if (i >= batch * in_c * h * wd) return;
  const int x = i % wd, y = (i / wd) % h, c = (i / (wd * h)) % in_c, n = i / (wd * h * in_c);
  const int cpg = in_c / groups, opg = out_c / groups, gi = c / cpg, cl = c % cpg;
  float sum = 0.0f;
  for (int oo = 0; oo < opg; ++oo) {
    const int o = gi * opg + oo;
    __global const float* dy = d_out + dy_off + ((n * out_c + o) * oh) * ow;
    __global const float* wk = w + w_off + (o * cpg + cl) * k * k;
    for (int ky = 0; ky < k; ++ky) {
      const int ty = y + pad - ky;
      if (ty < 0 || ty % stride != 0) continue;
      const int oy = ty / stride;
      if (oy >= oh) continue;
      for (int kx = 0; kx < k; ++kx) {
        const int tx = x + pad - kx;
        if (tx < 0 || tx % stride != 0) continue;
        const int ox = tx / stride;
        if (ox >= ow) continue;
        sum += dy[oy * ow + ox] * wk[ky * k + kx];
      }
    }
  }
  d_in[dx_off + i] = sum;
}

// d_weight[o][cl][ky][kx] = sum over samples and output positions of
// d_out[n][o][oy][ox] * in[n][c0 + cl][oy * stride - pad + ky][ox * stride - pad + kx],
// in the CPU backend's order (batch, then position).
__kernel void grouped_conv_backward_weight(__global const float* in, int in_off,
                                           __global const float* d_out, int dy_off,
                                           __global float* d_w, int dw_off, int batch, int in_c,
                                           int h, int wd, int out_c, int k, int stride, int pad,
                                           int oh, int ow, int groups) {
  const int cpg = in_c / groups, opg = out_c / groups;
  const int i = get_global_id(0);
  if (i >= out_c * cpg * k * k) return;
  const int kx = i % k, ky = (i / k) % k, cl = (i / (k * k)) % cpg, o = i / (k * k * cpg);
  const int c = (o / opg) * cpg + cl;
  // The output rows and columns whose tap stays inside the image.
  // (Integer division truncates, so the negative cases are spelled out.)
  const int oy_lo = pad - ky <= 0 ? 0 : (pad - ky + stride - 1) / stride;
  const int oy_hi = h - 1 + pad - ky < 0 ? 0 : min(oh, (h - 1 + pad - ky) / stride + 1);
  const int ox_lo = pad - kx <= 0 ? 0 : (pad - kx + stride - 1) / stride;
  const int ox_hi = wd - 1 + pad - kx < 0 ? 0 : min(ow, (wd - 1 + pad - kx) / stride + 1);
  float sum = 0.0f;
  for (int n = 0; n < batch; ++n) {
    __global const float* dy = d_out + dy_off + ((n * out_c + o) * oh) * ow;
    __global const float* plane = in + in_off + ((n * in_c + c) * h) * wd;
    for (int oy = oy_lo; oy < oy_hi; ++oy) {
      const int y = oy * stride - pad + ky;
      for (int ox = ox_lo; ox < ox_hi; ++ox) {
        sum += dy[oy * ow + ox] * plane[y * wd + ox * stride - pad + kx];
      }
    }
  }
  d_w[dw_off + i] = sum;
}
