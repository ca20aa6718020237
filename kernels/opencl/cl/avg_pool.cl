// Average pooling over NCHW planes (square windows, no padding) and global
// average pooling ([planes][inner] -> [planes]). No contraction: the CPU
// sums in the same order with separate multiplies, so the bits agree.
#pragma OPENCL FP_CONTRACT OFF

__kernel void avgpool_forward(__global const float* in, int in_off, __global float* out,
                              int out_off, int planes, int h, int w, int size, int stride, int oh,
                              int ow, float inv_area) {
  const int i = get_global_id(0);
  if (i >= planes * oh * ow) return;
  const int ox = i % ow, oy = (i / ow) % oh, plane = i / (ow * oh);
  __global const float* p = in + in_off + plane * h * w;
  float sum = 0.0f;
  for (int ky = 0; ky < size; ++ky) {
    const int row = (oy * stride + ky) * w + ox * stride;
    for (int kx = 0; kx < size; ++kx) sum += p[row + kx];
  }
  out[out_off + i] = sum * inv_area;
}

// Gather: each input sums the gradients of the windows covering it, in
// output order (the CPU's scatter order).
__kernel void avgpool_backward(__global const float* d_out, int d_out_off, __global float* d_in,
                               int d_in_off, int planes, int h, int w, int size, int stride, int oh,
                               int ow, float inv_area) {
  const int i = get_global_id(0);
  if (i >= planes * h * w) return;
  const int x = i % w, y = (i / w) % h, plane = i / (w * h);
  const int oy_lo = y < size ? 0 : (y - size) / stride + 1, oy_hi = min(oh - 1, y / stride);
  const int ox_lo = x < size ? 0 : (x - size) / stride + 1, ox_hi = min(ow - 1, x / stride);
  float sum = 0.0f;
  const int base = d_out_off + plane * oh * ow;
  for (int oy = oy_lo; oy <= oy_hi; ++oy)
    for (int ox = ox_lo; ox <= ox_hi; ++ox) sum += d_out[base + oy * ow + ox] * inv_area;
  d_in[d_in_off + i] = sum;
}

// One item per plane, compensated so long planes stay close to the CPU.
__kernel void global_avgpool_forward(__global const float* in, int in_off, __global float* out,
                                     int out_off, int planes, int inner, float inv) {
  const int p = get_global_id(0);
  if (p >= planes) return;
  __global const float* row = in + in_off + p * inner;
  float sum = 0.0f, carry = 0.0f;
  for (int i = 0; i < inner; ++i) {
    const float y = row[i] - carry;
    const float t = sum + y;
    carry = (t - sum) - y;
    sum = t;
  }
  out[out_off + p] = sum * inv;
}

__kernel void global_avgpool_backward(__global const float* d_out, int d_out_off,
                                      __global float* d_in, int d_in_off, int total, int inner,
                                      float inv) {
  const int i = get_global_id(0);
  if (i >= total) return;
  d_in[d_in_off + i] = d_out[d_out_off + i / inner] * inv;
}

// Back to OpenCL's default for the files concatenated after this one.
#pragma OPENCL FP_CONTRACT ON
