// Convolution as im2col + GEMM over a group of G samples at a time. The
// column matrix is [patch][G * out_h * out_w] (patch = in_c * k * k), so one
// GEMM covers the group; the GEMM's result is channel-major
// [out_c][G * out_hw] and is moved to NCHW by the gather kernels below.
// Every kernel is a gather (one work item writes one output), so sums run
// in a fixed order and no atomics are needed.

__kernel void im2col_group(__global const float* in, int in_off, __global float* col, int col_off,
                           int c, int h, int w, int k, int stride, int pad, int oh, int ow,
                           int first, int group) {
  const int ohw = oh * ow, cols = group * ohw;
  const int i = get_global_id(0);
  if (i >= c * k * k * cols) return;
  const int r = i / cols, j = i % cols;
  const int g = j / ohw, p = j % ohw;
  const int oy = p / ow, ox = p % ow;
  const int ch = r / (k * k), ky = (r / k) % k, kx = r % k;
  const int y = oy * stride - pad + ky, x = ox * stride - pad + kx;
  float v = 0.0f;
  if (y >= 0 && y < h && x >= 0 && x < w) v = in[in_off + (((first + g) * c + ch) * h + y) * w + x];
  col[col_off + i] = v;
}

// d_in[n][ch][y][x] = sum of the column entries that im2col copied from it.
__kernel void col2im_group(__global const float* col, int col_off, __global float* d_in, int d_off,
                           int c, int h, int w, int k, int stride, int pad, int oh, int ow,
                           int first, int group) {
  const int i = get_global_id(0);
  if (i >= group * c * h * w) return;
  const int x = i % w, y = (i / w) % h, ch = (i / (w * h)) % c, g = i / (w * h * c);
  const int ohw = oh * ow, cols = group * ohw;
  float sum = 0.0f;
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
      sum += col[col_off + ((ch * k + ky) * k + kx) * cols + g * ohw + oy * ow + ox];
    }
  }
  d_in[d_off + (first * c * h * w) + i] = sum;
}

// out[first + g][ch][p] = cm[ch][g * hw + p] (+ bias[ch] when has_bias).
__kernel void nchw_from_channel_major(__global const float* cm, int cm_off, __global float* out, int out_off,
                                      __global const float* bias, int bias_off, int has_bias,
                                      int channels, int hw, int first, int group) {
  const int i = get_global_id(0);
  if (i >= group * channels * hw) return;
  const int p = i % hw, ch = (i / hw) % channels, g = i / (hw * channels);
  float v = cm[cm_off + ch * group * hw + g * hw + p];
  if (has_bias) v += bias[bias_off + ch];
  out[out_off + first * channels * hw + i] = v;
}

// cm[ch][g * hw + p] = x[first + g][ch][p].
__kernel void channel_major_from_nchw(__global const float* x, int x_off, __global float* cm, int cm_off,
                                      int channels, int hw, int first, int group) {
  const int i = get_global_id(0);
  if (i >= group * channels * hw) return;
  const int p = i % hw, g = (i / hw) % group, ch = i / (hw * group);
  cm[cm_off + i] = x[x_off + ((first + g) * channels + ch) * hw + p];
}
