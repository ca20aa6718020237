// Max pooling over NCHW planes. argmax holds, per output, the index of the
// chosen input within its plane (int32 stored in a float buffer); ties keep
// the first maximum in row-major order, as on the CPU.

__kernel void maxpool_forward(__global const float* in, int in_off, __global float* out, int out_off,
                              __global int* argmax, int arg_off, int planes, int h, int w, int size,
                              int stride, int oh, int ow) {
  const int i = get_global_id(0);
  if (i >= planes * oh * ow) return;
  const int ox = i % ow, oy = (i / ow) % oh, plane = i / (ow * oh);
  __global const float* p = in + in_off + plane * h * w;
  int best_idx = oy * stride * w + ox * stride;
  float best = p[best_idx];
  for (int ky = 0; ky < size; ++ky) {
    const int row = (oy * stride + ky) * w + ox * stride;
    for (int kx = 0; kx < size; ++kx) {
      const float v = p[row + kx];
      if (v > best) {
        best = v;
        best_idx = row + kx;
      }
    }
  }
  out[out_off + i] = best;
  argmax[arg_off + i] = best_idx;
}

// Gather: each input sums the gradients of the outputs that chose it, in
// output order.
__kernel void maxpool_backward(__global const float* d_out, int d_out_off, __global const int* argmax,
                               int arg_off, __global float* d_in, int d_in_off, int planes, int h, int w,
                               int size, int stride, int oh, int ow) {
  const int i = get_global_id(0);
  if (i >= planes * h * w) return;
  const int x = i % w, y = (i / w) % h, plane = i / (w * h);
  const int me = y * w + x;
  const int oy_lo = y < size ? 0 : (y - size) / stride + 1, oy_hi = min(oh - 1, y / stride);
  const int ox_lo = x < size ? 0 : (x - size) / stride + 1, ox_hi = min(ow - 1, x / stride);
  float sum = 0.0f;
  const int base = plane * oh * ow;
  for (int oy = oy_lo; oy <= oy_hi; ++oy)
    for (int ox = ox_lo; ox <= ox_hi; ++ox) {
      const int o = base + oy * ow + ox;
      if (argmax[arg_off + o] == me) sum += d_out[d_out_off + o];
    }
  d_in[d_in_off + i] = sum;
}
