// Batch normalisation over x shaped [batch][channels][inner]: one work-group
// of BN_GROUP items per channel sums its batch * inner values (compensated,
// in float: many phone GPUs have no double), reduces the partial sums in
// local memory and then writes the channel's outputs, all in one launch.

#define BN_GROUP 64

// sum += v with Kahan's compensation in carry.
inline void bn_kahan_add(float* sum, float* carry, float v) {
  const float y = v - *carry;
  const float t = *sum + y;
  *carry = (t - *sum) - y;
  *sum = t;
}

// Tree sum of a and b over the work-group; every item gets the totals.
inline float2 bn_group_sum(__local float* a, __local float* b, float va, float vb) {
  const int lid = get_local_id(0);
  a[lid] = va;
  b[lid] = vb;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = BN_GROUP / 2; s > 0; s >>= 1) {
    if (lid < s) {
      a[lid] += a[lid + s];
      b[lid] += b[lid + s];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  return (float2)(a[0], b[0]);
}

// A fused ReLU (lo 0, hi +inf) or ReLU6 (lo 0, hi 6) as clip_forward
// applies it; clip 0: v itself.
inline float bn_clip(float v, int clip, float lo, float hi) {
  if (!clip) return v;
  const float up = v > lo ? v : lo;
  return up < hi ? up : hi;
}

// The gradient of a fused clip's input: g where lo < v < hi, v the value
// before the clip (as clip_backward's mask on the clipped value).
inline float bn_mask(float g, float v, int clip, float lo, float hi) {
  if (!clip) return g;
  return v > lo && v < hi ? g : 0.0f;
}

// Index of the j-th value (j < batch * inner) of channel c.
inline int bn_at(int j, int c, int channels, int inner) {
  const int n = j / inner;
  return (n * channels + c) * inner + (j - n * inner);
}

__kernel __attribute__((reqd_work_group_size(BN_GROUP, 1, 1))) void batch_norm_forward_training(
    __global const float* x, int x_off, __global const float* scale, int scale_off,
    __global const float* shift, int shift_off, __global float* rmean, int rmean_off,
    __global float* rvar, int rvar_off, __global float* smean, int smean_off,
    __global float* sinvstd, int sinvstd_off, __global float* y, int y_off, int batch, int channels,
    int inner, float eps, float momentum, int clip, float lo, float hi) {
  __local float la[BN_GROUP], lb[BN_GROUP];
  const int c = get_group_id(0), lid = get_local_id(0);
  const int count = batch * inner;
  // Sums of x - k, k the channel's first value, so that the sum of squares
  // does not cancel when the mean is large against the spread.
  const float k = x[x_off + c * inner];
  float s1 = 0.0f, c1 = 0.0f, s2 = 0.0f, c2 = 0.0f;
  for (int j = lid; j < count; j += BN_GROUP) {
    const float d = x[x_off + bn_at(j, c, channels, inner)] - k;
    bn_kahan_add(&s1, &c1, d);
    bn_kahan_add(&s2, &c2, d * d);
  }
  const float2 s = bn_group_sum(la, lb, s1 - c1, s2 - c2);
  const float shifted_mean = s.x / count;
  const float var = max(0.0f, s.y / count - shifted_mean * shifted_mean);
  const float mean = k + shifted_mean;
  const float invstd = 1.0f / sqrt(var + eps);
  if (lid == 0) {
    // PyTorch's running variance is unbiased; one value keeps the biased 0.
    const float unbias = count > 1 ? (float)count / (float)(count - 1) : 1.0f;
    smean[smean_off + c] = mean;
    sinvstd[sinvstd_off + c] = invstd;
    rmean[rmean_off + c] = (1.0f - momentum) * rmean[rmean_off + c] + momentum * mean;
    rvar[rvar_off + c] = (1.0f - momentum) * rvar[rvar_off + c] + momentum * var * unbias;
  }
  const float a = scale[scale_off + c] * invstd;
  const float b = shift[shift_off + c] - mean * a;
  for (int j = lid; j < count; j += BN_GROUP) {
    const int at = bn_at(j, c, channels, inner);
    y[y_off + at] = bn_clip(x[x_off + at] * a + b, clip, lo, hi);
  }
}

// Evaluation (or a frozen layer) in two launches: 1 / sqrt(var + eps) per
// channel, saved for a frozen layer's backward pass, then an elementwise map
// that reads it (a square root per element made PoCL's loop ten times slower).
__kernel void batch_norm_invstd(__global const float* rvar, int rvar_off, __global float* sinvstd,
                                int sinvstd_off, int channels, float eps) {
  const int c = get_global_id(0);
  if (c >= channels) return;
  sinvstd[sinvstd_off + c] = 1.0f / sqrt(rvar[rvar_off + c] + eps);
}

// Also the one-pass replay of a training pass (kernels/batch_norm_replay.h),
// given its saved mean and invstd: a and b are formed as that kernel forms them.
__kernel void batch_norm_forward_inference(__global const float* x, int x_off,
                                           __global const float* scale, int scale_off,
                                           __global const float* shift, int shift_off,
                                           __global const float* rmean, int rmean_off,
                                           __global const float* sinvstd, int sinvstd_off,
                                           __global float* y, int y_off, int total, int channels,
                                           int inner, int clip, float lo, float hi) {
  const int i = get_global_id(0);
  if (i >= total) return;
  const int c = (i / inner) % channels;
  const float a = scale[scale_off + c] * sinvstd[sinvstd_off + c];
  const float b = shift[shift_off + c] - rmean[rmean_off + c] * a;
  y[y_off + i] = bn_clip(x[x_off + i] * a + b, clip, lo, hi);
}

// Flags: batch_stats (the forward pass used the batch's statistics), and
// which of d_x, d_scale, d_shift to write (their buffers are null if not);
// with clip, dy is the gradient of the clipped output, masked where the
// forward pass's value x * fa + fb (its a and b, formed the same way) was
// inside the clip.
__kernel __attribute__((reqd_work_group_size(BN_GROUP, 1, 1))) void batch_norm_backward(
    __global const float* x, int x_off, __global const float* dy, int dy_off,
    __global const float* scale, int scale_off, __global const float* shift, int shift_off, __global const float* smean, int smean_off,
    __global const float* sinvstd, int sinvstd_off, __global float* dx, int dx_off,
    __global float* dscale, int dscale_off, __global float* dshift, int dshift_off, int batch,
    int channels, int inner, int batch_stats, int want_dx, int want_dscale, int want_dshift,
    int clip, float lo, float hi) {
  __local float la[BN_GROUP], lb[BN_GROUP];
  const int c = get_group_id(0), lid = get_local_id(0);
  const int count = batch * inner;
  const float mean = smean[smean_off + c], invstd = sinvstd[sinvstd_off + c];
  // The forward pass's affine map (batch_norm_forward_training and
  // batch_norm_forward_inference form it so), for the clip's mask.
  const float fa = scale[scale_off + c] * invstd;
  const float fb = clip ? shift[shift_off + c] - mean * fa : 0.0f;
  float2 s = (float2)(0.0f, 0.0f);  // sum of dy, sum of dy * (x - mean)
  if (batch_stats || want_dscale || want_dshift) {
    float s1 = 0.0f, c1 = 0.0f, s2 = 0.0f, c2 = 0.0f;
    for (int j = lid; j < count; j += BN_GROUP) {
      const int at = bn_at(j, c, channels, inner);
      const float xv = x[x_off + at];
      const float g = bn_mask(dy[dy_off + at], xv * fa + fb, clip, lo, hi);
      bn_kahan_add(&s1, &c1, g);
      bn_kahan_add(&s2, &c2, g * (xv - mean));
    }
    s = bn_group_sum(la, lb, s1 - c1, s2 - c2);
  }
  if (lid == 0) {
    if (want_dshift) dshift[dshift_off + c] = s.x;
    if (want_dscale) dscale[dscale_off + c] = s.y * invstd;
  }
  if (!want_dx) return;
  // d_x = scale * invstd * (dy - mean(dy) - xhat * mean(dy * xhat)) with
  // batch statistics; without, only the first term.
  const float a = scale[scale_off + c] * invstd;
  const float b = batch_stats ? -a * invstd * invstd * s.y / count : 0.0f;
  const float off = batch_stats ? -a * s.x / count : 0.0f;
  for (int j = lid; j < count; j += BN_GROUP) {
    const int at = bn_at(j, c, channels, inner);
    const float xv = x[x_off + at];
    const float g = bn_mask(dy[dy_off + at], xv * fa + fb, clip, lo, hi);
    dx[dx_off + at] = g * a + (xv - mean) * b + off;
  }
}
