// Elementwise ops. FP_CONTRACT off everywhere in this file: a fused
// multiply-add rounds differently from the CPU backend's separate ones.
#pragma OPENCL FP_CONTRACT OFF

__kernel void relu_forward(__global const float* x, int x_off, __global float* y, int y_off, int n) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const float v = x[x_off + i];
  y[y_off + i] = v > 0.0f ? v : 0.0f;
}

__kernel void relu_backward(__global const float* y, int y_off, __global const float* dy, int dy_off,
                            __global float* dx, int dx_off, int n) {
  const int i = get_global_id(0);
  if (i >= n) return;
  dx[dx_off + i] = y[y_off + i] > 0.0f ? dy[dy_off + i] : 0.0f;
}

// min(max(x, lo), hi), written as the CPU backend's selects (same NaN handling).
__kernel void clip_forward(__global const float* x, int x_off, __global float* y, int y_off, float lo,
                           float hi, int n) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const float v = x[x_off + i];
  const float up = v > lo ? v : lo;
  y[y_off + i] = up < hi ? up : hi;
}

__kernel void clip_backward(__global const float* y, int y_off, __global const float* dy, int dy_off,
                            __global float* dx, int dx_off, float lo, float hi, int n) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const float v = y[y_off + i];
  dx[dx_off + i] = v > lo && v < hi ? dy[dy_off + i] : 0.0f;
}

// The same counter-based hash as kernels/dropout_hash.h; keep them in step.
ulong mix_bits(ulong x) {
  x += 0x9E3779B97F4A7C15UL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9UL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBUL;
  return x ^ (x >> 31);
}

__kernel void dropout_forward(__global const float* x, int x_off, __global float* y, int y_off,
                              __global float* mask, int mask_off, float rate, float scale, ulong seed, int n) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const float u = (float)(mix_bits(seed ^ mix_bits((ulong)i)) >> 40) * (1.0f / 16777216.0f);
  const int keep = u >= rate;
  mask[mask_off + i] = keep ? 1.0f : 0.0f;
  y[y_off + i] = keep ? x[x_off + i] * scale : 0.0f;
}

__kernel void dropout_backward(__global const float* dy, int dy_off, __global const float* mask, int mask_off,
                               float scale, __global float* dx, int dx_off, int n) {
  const int i = get_global_id(0);
  if (i >= n) return;
  dx[dx_off + i] = mask[mask_off + i] != 0.0f ? dy[dy_off + i] * scale : 0.0f;
}
