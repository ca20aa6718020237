// Optimizer updates with the CPU backend's order of operations and no
// contraction, so SGD gives the same bits on both backends.
#pragma OPENCL FP_CONTRACT OFF

__kernel void sgd_update(__global float* p, int p_off, __global const float* g, int g_off, __global float* v,
                         int v_off, float lr, float momentum, float wd, int n) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const float pi = p[p_off + i];
  if (momentum == 0.0f) {
    p[p_off + i] = pi - lr * (g[g_off + i] + wd * pi);
    return;
  }
  const float vi = momentum * v[v_off + i] + (g[g_off + i] + wd * pi);
  v[v_off + i] = vi;
  p[p_off + i] = pi - lr * vi;
}

__kernel void adam_update(__global float* p, int p_off, __global const float* g, int g_off, __global float* m,
                          int m_off, __global float* v, int v_off, float b1, float b2, float eps, float wd,
                          float step_size, float c2_sqrt, int n) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const float pi = p[p_off + i];
  const float gi = g[g_off + i] + wd * pi;
  const float mi = b1 * m[m_off + i] + (1.0f - b1) * gi;
  const float vi = b2 * v[v_off + i] + (1.0f - b2) * gi * gi;
  m[m_off + i] = mi;
  v[v_off + i] = vi;
  p[p_off + i] = pi - step_size * mi / (sqrt(vi) / c2_sqrt + eps);
}
