// Batch normalisation on host memory, x shaped [batch][channels][inner].
// Work is split over channels, and each channel's sums run in one fixed
// order on one thread, so the results do not depend on the thread count.
//
// Statistics are sums of x - k (k: the channel's first value, a cheap guess
// at its mean, so the sum of squares does not cancel catastrophically when
// the mean is large against the spread), accumulated in float vectors over
// short blocks and in double across blocks: one pass for the statistics and
// one to write the output, with float-vector speed and none of the drift of a
// float sum over 10^5 values.
//
// An OutputClip fuses a ReLU (lo 0, hi +inf) or ReLU6 (lo 0, hi 6) into the
// pass that writes y, and into the backward pass, which then reads the
// gradient of the clipped output and masks it where lo < v < hi, v the
// forward pass's value before the clip, formed again from x and the saved
// statistics bit for bit (so y is not read: one stream less per pass), so
// neither activation pass runs.
#pragma once

#include "kernels/geometry.h"

namespace mt::kernels {

class ThreadPool;

// y = min(max(v, lo), hi) in ClipForward's order of comparisons, so a fused
// pass writes what the unfused pair does. Inactive: y = v, NaN kept.
struct OutputClip {
  bool active = false;
  float lo = 0.0f, hi = 0.0f;
};

void BatchNormForwardTraining(ThreadPool& pool, const BatchNormGeometry& g, const float* x,
                              const float* scale, const float* shift, float* running_mean,
                              float* running_var, float* save_mean, float* save_invstd, float* y,
                              OutputClip clip = {});

void BatchNormForwardInference(ThreadPool& pool, const BatchNormGeometry& g, const float* x,
                               const float* scale, const float* shift, const float* running_mean,
                               const float* running_var, float* save_invstd, float* y,
                               OutputClip clip = {});

// y as BatchNormForwardTraining wrote it from the same x, scale and shift,
// from the statistics it saved (its output pass alone; y may be x).
void BatchNormReplay(ThreadPool& pool, const BatchNormGeometry& g, const float* x,
                     const float* scale, const float* shift, const float* save_mean,
                     const float* save_invstd, float* y, OutputClip clip = {});

// d_x, d_scale and d_shift may each be null (not wanted). With an active
// clip, d_y is the gradient of the clipped output, and shift the forward
// pass's (save_mean the running mean after an evaluation-mode pass, as
// always); d_x may be d_y.
void BatchNormBackward(ThreadPool& pool, const BatchNormGeometry& g, const float* x,
                       const float* d_y, const float* scale, const float* save_mean,
                       const float* save_invstd, bool batch_stats, float* d_x, float* d_scale,
                       float* d_shift, OutputClip clip = {}, const float* shift = nullptr);

}  // namespace mt::kernels
