// Bias over x shaped [outer][channels][inner].

__kernel void add_bias(__global float* x, int x_off, __global const float* bias, int bias_off,
                       int channels, int inner, int total) {
  const int i = get_global_id(0);
  if (i >= total) return;
  x[x_off + i] += bias[bias_off + (i / inner) % channels];
}

// One work item per channel, summing in the CPU backend's order (batch, then
// position) with compensation, so long sums stay within 1e-4 of its result
// without needing double precision (many phone GPUs have none).
__kernel void bias_grad(__global const float* dx, int dx_off, __global float* db, int db_off,
                        int outer, int channels, int inner) {
  const int ch = get_global_id(0);
  if (ch >= channels) return;
  float sum = 0.0f, carry = 0.0f;
  for (int o = 0; o < outer; ++o) {
    __global const float* row = dx + dx_off + (o * channels + ch) * inner;
    for (int i = 0; i < inner; ++i) {
      const float y = row[i] - carry;
      const float t = sum + y;
      carry = (t - sum) - y;
      sum = t;
    }
  }
  db[db_off + ch] = sum;
}
