// Softmax cross-entropy and argmax, one work item per row (rows are short:
// one per class).
#pragma OPENCL FP_CONTRACT OFF

// Writes d_logits = (softmax - onehot) / n and the row's loss; a label
// outside [0, classes) gives a NaN loss, which the host reports.
__kernel void softmax_xent(__global const float* x, int x_off, __global const int* labels, int labels_off,
                           __global float* d, int d_off, __global float* row_loss, int loss_off, int n,
                           int classes, float inv_n) {
  const int r = get_global_id(0);
  if (r >= n) return;
  __global const float* row = x + x_off + r * classes;
  __global float* drow = d + d_off + r * classes;
  const int label = labels[labels_off + r];
  if (label < 0 || label >= classes) {
    row_loss[loss_off + r] = NAN;
    return;
  }
  float mx = row[0];
  for (int c = 1; c < classes; ++c) mx = fmax(mx, row[c]);
  float sum = 0.0f;
  for (int c = 0; c < classes; ++c) sum += exp(row[c] - mx);
  row_loss[loss_off + r] = log(sum) - (row[label] - mx);
  const float inv_sum = 1.0f / sum;
  for (int c = 0; c < classes; ++c) {
    const float p = exp(row[c] - mx) * inv_sum;
    drow[c] = (p - (c == label ? 1.0f : 0.0f)) * inv_n;
  }
}

__kernel void argmax_rows(__global const float* x, int x_off, __global int* out, int out_off, int n, int classes) {
  const int r = get_global_id(0);
  if (r >= n) return;
  __global const float* row = x + x_off + r * classes;
  int best = 0;
  for (int c = 1; c < classes; ++c)
    if (row[c] > row[best]) best = c;
  out[out_off + r] = best;
}
