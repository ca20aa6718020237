#include "kernels/cpu/cpu_backend.h"

#include "kernels/op_table.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include <Eigen/Core>

#include "kernels/cpu/avg_pool.h"
#include "kernels/cpu/batch_norm.h"
#include "kernels/cpu/dense_conv.h"
#include "kernels/cpu/depthwise_conv.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/grouped_conv.h"
#include "kernels/cpu/padded_pool.h"
#include "kernels/cpu/pool.h"
#include "kernels/cpu/simd.h"
#include "kernels/dropout_hash.h"
#include "kernels/op_scalars.h"

namespace mt::kernels {

CpuBackend::CpuBackend(int threads) : pool_(threads) {}
CpuBackend::~CpuBackend() = default;

float* CpuBackend::Data(View v) {
  if (v.buffer == nullptr) return nullptr;
  assert(dynamic_cast<CpuBuffer*>(v.buffer) != nullptr && "view is not from a CpuBackend");
  return static_cast<CpuBuffer*>(v.buffer)->data() + v.offset;
}

int32_t* CpuBackend::Int32Data(View v) { return reinterpret_cast<int32_t*>(Data(v)); }

OpSet CpuBackend::SupportedOps() const {
  return OpSet{Op::kGemm,
               Op::kAxpy,
               Op::kScale,
               Op::kConv2dForward,
               Op::kConv2dBackward,
               Op::kGroupedConv2d,
               Op::kMaxPoolForward,
               Op::kMaxPoolBackward,
               Op::kAvgPoolForward,
               Op::kAvgPoolBackward,
               Op::kGlobalAvgPoolForward,
               Op::kGlobalAvgPoolBackward,
               Op::kBatchNormForwardTraining,
               Op::kBatchNormForwardInference,
               Op::kBatchNormBackward,
               Op::kAddBias,
               Op::kBiasGrad,
               Op::kReluForward,
               Op::kReluBackward,
               Op::kClipForward,
               Op::kClipBackward,
               Op::kActivationForward,
               Op::kActivationBackward,
               Op::kDropoutForward,
               Op::kDropoutBackward,
               Op::kSoftmaxCrossEntropy,
               Op::kArgmaxRows,
               Op::kSgdUpdate,
               Op::kAdamUpdate,
               Op::kPaddedPool} |
         TableOpsOf(*this);
}

// ---- memory

std::unique_ptr<Buffer> CpuBackend::Allocate(size_t count) {
  return std::make_unique<CpuBuffer>(this, count, &allocated_bytes_);
}

void CpuBackend::Upload(const void* host, View dst) {
  if (dst.count) std::memcpy(Data(dst), host, dst.count * sizeof(float));
}

void CpuBackend::Download(View src, void* host) {
  if (src.count) std::memcpy(host, Data(src), src.count * sizeof(float));
}

void CpuBackend::Copy(View src, View dst) {
  const size_t n = std::min(src.count, dst.count);
  if (n) std::memmove(Data(dst), Data(src), n * sizeof(float));
}

void CpuBackend::Fill(View dst, float value) {
  float* p = Data(dst);
  ForEachRange(dst.count, [p, value](size_t b, size_t e) { std::fill(p + b, p + e, value); });
}

// ---- linear algebra

void CpuBackend::Gemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, View a, View b,
                      float beta, View c) {
  std::lock_guard<std::mutex> lock(gemm_mu_);
  kernels::Gemm(pool_, gemm_scratch_, trans_a, trans_b, m, n, k, alpha, Data(a), Data(b), beta,
                Data(c));
}

void CpuBackend::Axpy(float alpha, View x, View y) {
  const float* xs = Data(x);
  float* ys = Data(y);
  ForEachRange(std::min(x.count, y.count), [xs, ys, alpha](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) ys[i] += alpha * xs[i];
  });
}

void CpuBackend::Scale(float alpha, View x) {
  float* xs = Data(x);
  ForEachRange(x.count, [xs, alpha](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) xs[i] *= alpha;
  });
}

// ---- convolution and pooling

// Forward and backward may take different paths, so the workspace covers
// whichever they take.
size_t CpuBackend::ConvWorkspaceCount(const ConvGeometry& g) const {
  if (g.groups > 1) {
    return DepthwiseConvHandles(g) ? DepthwiseConvWorkspaceFloats(g, pool_.size())
                                   : GroupedConvWorkspaceFloats(g, pool_.size());
  }
  return DenseConvWorkspaceFloats(g, pool_.size());
}

void CpuBackend::Conv2dForward(const ConvGeometry& g, View in, View weight, View bias, View out,
                               View workspace) {
  const float* b = bias.empty() ? nullptr : Data(bias);
  if (g.groups > 1) {
    if (DepthwiseConvHandles(g)) {
      DepthwiseConvForward(pool_, g, Data(in), Data(weight), b, Data(out), Data(workspace));
    } else {
      GroupedConvForward(pool_, g, Data(in), Data(weight), b, Data(out), Data(workspace));
    }
    return;
  }
  DenseConvForward(pool_, g, Data(in), Data(weight), b, Data(out), Data(workspace));
}

void CpuBackend::Conv2dBackward(const ConvGeometry& g, View in, View weight, View d_out, View d_in,
                                View d_weight, View d_bias, View workspace) {
  float* dx = d_in.empty() ? nullptr : Data(d_in);
  // No d_weight (a frozen layer): no bias gradient either.
  float* dw = d_weight.empty() ? nullptr : Data(d_weight);
  float* db = d_bias.empty() || !dw ? nullptr : Data(d_bias);
  if (!dw && !dx) return;
  if (g.groups > 1) {
    if (DepthwiseConvHandles(g)) {
      DepthwiseConvBackward(pool_, g, Data(in), Data(weight), Data(d_out), dx, dw, db,
                            Data(workspace));
    } else {
      GroupedConvBackward(pool_, g, Data(in), Data(weight), Data(d_out), dx, dw, db,
                          Data(workspace));
    }
    return;
  }
  DenseConvBackward(pool_, g, Data(in), Data(weight), Data(d_out), dx, dw, db, Data(workspace));
}

void CpuBackend::MaxPoolForward(const PoolGeometry& g, View in, View out, View argmax) {
  if (g.pad > 0) return PaddedMaxPoolForward(pool_, g, Data(in), Data(out), Int32Data(argmax));
  kernels::MaxPoolForward(pool_, g, Data(in), Data(out), Int32Data(argmax));
}

void CpuBackend::MaxPoolBackward(const PoolGeometry& g, View d_out, View argmax, View d_in) {
  kernels::MaxPoolBackward(pool_, g, Data(d_out), Int32Data(argmax), Data(d_in));
}

void CpuBackend::AvgPoolForward(const PoolGeometry& g, View in, View out) {
  if (g.pad > 0) return PaddedAvgPoolForward(pool_, g, Data(in), Data(out));
  kernels::AvgPoolForward(pool_, g, Data(in), Data(out));
}

void CpuBackend::AvgPoolBackward(const PoolGeometry& g, View d_out, View d_in) {
  if (g.pad > 0) return PaddedAvgPoolBackward(pool_, g, Data(d_out), Data(d_in));
  kernels::AvgPoolBackward(pool_, g, Data(d_out), Data(d_in));
}

void CpuBackend::GlobalAvgPoolForward(View in, View out, int planes, int inner) {
  kernels::GlobalAvgPoolForward(pool_, Data(in), Data(out), planes, inner);
}

void CpuBackend::GlobalAvgPoolBackward(View d_out, View d_in, int planes, int inner) {
  kernels::GlobalAvgPoolBackward(pool_, Data(d_out), Data(d_in), planes, inner);
}

// ---- batch normalisation

void CpuBackend::BatchNormForwardTraining(const BatchNormGeometry& g, View x, View scale,
                                          View shift, View running_mean, View running_var,
                                          View save_mean, View save_invstd, View y) {
  kernels::BatchNormForwardTraining(pool_, g, Data(x), Data(scale), Data(shift), Data(running_mean),
                                    Data(running_var), Data(save_mean), Data(save_invstd), Data(y));
}

void CpuBackend::BatchNormForwardInference(const BatchNormGeometry& g, View x, View scale,
                                           View shift, View running_mean, View running_var,
                                           View save_invstd, View y) {
  kernels::BatchNormForwardInference(pool_, g, Data(x), Data(scale), Data(shift),
                                     Data(running_mean), Data(running_var), Data(save_invstd),
                                     Data(y));
}

void CpuBackend::BatchNormBackward(const BatchNormGeometry& g, View x, View d_y, View scale,
                                   View save_mean, View save_invstd, bool batch_stats, View d_x,
                                   View d_scale, View d_shift) {
  kernels::BatchNormBackward(pool_, g, Data(x), Data(d_y), Data(scale), Data(save_mean),
                             Data(save_invstd), batch_stats, d_x.empty() ? nullptr : Data(d_x),
                             d_scale.empty() ? nullptr : Data(d_scale),
                             d_shift.empty() ? nullptr : Data(d_shift));
}

// ---- elementwise and reductions

void CpuBackend::AddBias(View x, View bias, int outer, int channels, int inner) {
  float* xs = Data(x);
  const float* bs = Data(bias);
  if (inner == 1) {
    // Fully connected layout: vectorise along the channels of each row.
    auto rows = [xs, bs, channels](size_t b, size_t e) {
      for (size_t o = b; o < e; ++o) {
        float* row = xs + o * channels;
        for (int c = 0; c < channels; ++c) row[c] += bs[c];
      }
    };
    if (static_cast<size_t>(outer) * channels < kParallelElements) {
      rows(0, outer);
    } else {
      pool_.ParallelFor(outer, [&](int64_t b, int64_t e, int) { rows(b, e); });
    }
    return;
  }
  auto planes = [xs, bs, channels, inner](size_t b, size_t e) {
    for (size_t p = b; p < e; ++p) {
      float* row = xs + p * inner;
      const float v = bs[p % channels];
      for (int i = 0; i < inner; ++i) row[i] += v;
    }
  };
  const size_t count = static_cast<size_t>(outer) * channels;
  if (count * inner < kParallelElements) {
    planes(0, count);
  } else {
    pool_.ParallelFor(static_cast<int64_t>(count),
                      [&](int64_t b, int64_t e, int) { planes(b, e); });
  }
}

void CpuBackend::BiasGrad(View d_x, View d_bias, int outer, int channels, int inner) {
  const float* dx = Data(d_x);
  float* db = Data(d_bias);
  if (inner == 1) {
    std::fill(db, db + channels, 0.0f);
    for (int o = 0; o < outer; ++o) {
      const float* row = dx + static_cast<size_t>(o) * channels;
      for (int c = 0; c < channels; ++c) db[c] += row[c];
    }
    return;
  }
  // One channel per task, summed over the batch in order, so the result does
  // not depend on the thread count.
  auto chans = [dx, db, outer, channels, inner](int64_t b, int64_t e, int) {
    for (int64_t c = b; c < e; ++c) {
      double s = 0.0;
      for (int o = 0; o < outer; ++o) {
        s += simd::Sum(dx + (static_cast<size_t>(o) * channels + c) * inner, inner);
      }
      db[c] = static_cast<float>(s);
    }
  };
  if (static_cast<size_t>(outer) * channels * inner < kParallelElements) {
    chans(0, channels, 0);
  } else {
    pool_.ParallelFor(channels, chans);
  }
}

void CpuBackend::ReluForward(View in, View out) {
  const float* x = Data(in);
  float* y = Data(out);
  ForEachRange(in.count, [x, y](size_t b, size_t e) {
    using simd::Vec;
    const Vec zero{};
    size_t i = b;
    for (; i + simd::kLanes <= e; i += simd::kLanes) {
      const Vec v = simd::Load(x + i);
      simd::Store(y + i, v > zero ? v : zero);
    }
    for (; i < e; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  });
}

void CpuBackend::ReluBackward(View out, View d_out, View d_in) {
  const float* y = Data(out);
  const float* dy = Data(d_out);
  float* dx = Data(d_in);
  // Explicit vectors: d_in usually is d_out, and for that overlap the
  // compiler's alias check falls back to a scalar loop with a branch.
  ForEachRange(out.count, [y, dy, dx](size_t b, size_t e) {
    using simd::Vec;
    const Vec zero{};
    size_t i = b;
    for (; i + simd::kLanes <= e; i += simd::kLanes) {
      const Vec g = simd::Load(dy + i);
      simd::Store(dx + i, simd::Load(y + i) > zero ? g : zero);
    }
    for (; i < e; ++i) dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
  });
}

void CpuBackend::ClipForward(View in, View out, float lo, float hi) {
  const float* x = Data(in);
  float* y = Data(out);
  ForEachRange(in.count, [x, y, lo, hi](size_t b, size_t e) {
    using simd::Vec;
    const Vec l = simd::Splat(lo), h = simd::Splat(hi);
    size_t i = b;
    for (; i + simd::kLanes <= e; i += simd::kLanes) {
      const Vec v = simd::Load(x + i);
      const Vec up = v > l ? v : l;
      simd::Store(y + i, up < h ? up : h);
    }
    for (; i < e; ++i) {
      const float up = x[i] > lo ? x[i] : lo;
      y[i] = up < hi ? up : hi;
    }
  });
}

void CpuBackend::ClipBackward(View out, View d_out, View d_in, float lo, float hi) {
  const float* y = Data(out);
  const float* dy = Data(d_out);
  float* dx = Data(d_in);
  // Explicit vectors, as in ReluBackward: d_in usually is d_out.
  ForEachRange(out.count, [y, dy, dx, lo, hi](size_t b, size_t e) {
    using simd::Vec;
    const Vec zero{}, l = simd::Splat(lo), h = simd::Splat(hi);
    size_t i = b;
    for (; i + simd::kLanes <= e; i += simd::kLanes) {
      const Vec v = simd::Load(y + i), g = simd::Load(dy + i);
      simd::Store(dx + i, ((v > l) & (v < h)) ? g : zero);
    }
    for (; i < e; ++i) dx[i] = y[i] > lo && y[i] < hi ? dy[i] : 0.0f;
  });
}

void CpuBackend::DropoutForward(View in, View out, View mask, float rate, uint64_t seed) {
  const float* x = Data(in);
  float* y = Data(out);
  float* m = Data(mask);
  const float scale = DropoutScale(rate);
  ForEachRange(in.count, [x, y, m, rate, seed, scale](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) {
      const bool keep = KeepAt(seed, i, rate);
      m[i] = keep ? 1.0f : 0.0f;
      y[i] = keep ? x[i] * scale : 0.0f;
    }
  });
}

void CpuBackend::DropoutBackward(View d_out, View mask, float rate, View d_in) {
  const float* dy = Data(d_out);
  const float* m = Data(mask);
  float* dx = Data(d_in);
  const float scale = DropoutScale(rate);
  ForEachRange(d_out.count, [dy, m, dx, scale](size_t b, size_t e) {
    using simd::Vec;
    const Vec zero{}, s = simd::Splat(scale);
    size_t i = b;
    for (; i + simd::kLanes <= e; i += simd::kLanes) {
      const Vec g = simd::Load(dy + i) * s;
      simd::Store(dx + i, simd::Load(m + i) != zero ? g : zero);
    }
    for (; i < e; ++i) dx[i] = m[i] != 0.0f ? dy[i] * scale : 0.0f;
  });
}

double CpuBackend::SoftmaxCrossEntropy(View logits, View labels, int n, int classes,
                                       View d_logits) {
  const float* x = Data(logits);
  const int32_t* y = Int32Data(labels);
  float* d = Data(d_logits);
  const float inv_n = MeanScale(n);
  double loss = 0.0;
  for (int r = 0; r < n; ++r) {
    const float* row = x + static_cast<size_t>(r) * classes;
    float* drow = d + static_cast<size_t>(r) * classes;
    const int label = y[r];
    if (label < 0 || label >= classes) {
      throw std::out_of_range("SoftmaxCrossEntropy: label " + std::to_string(label) +
                              " outside [0, " + std::to_string(classes) + ")");
    }
    // Shifting by the row max keeps every exp() in (0, 1], so large logits
    // cannot overflow.
    const float mx = *std::max_element(row, row + classes);
    double sum = 0.0;
    for (int c = 0; c < classes; ++c) sum += std::exp(static_cast<double>(row[c] - mx));
    loss += std::log(sum) - static_cast<double>(row[label] - mx);
    const double inv_sum = 1.0 / sum;
    for (int c = 0; c < classes; ++c) {
      const double p = std::exp(static_cast<double>(row[c] - mx)) * inv_sum;
      drow[c] = static_cast<float>(p - (c == label ? 1.0 : 0.0)) * inv_n;
    }
  }
  return loss;
}

void CpuBackend::ArgmaxRows(View logits, int n, int classes, View out) {
  const float* x = Data(logits);
  int32_t* o = Int32Data(out);
  for (int r = 0; r < n; ++r) {
    const float* row = x + static_cast<size_t>(r) * classes;
    o[r] = static_cast<int32_t>(std::max_element(row, row + classes) - row);
  }
}

// ---- optimizers (elementwise, so the split over threads never changes a bit)

void CpuBackend::SgdUpdate(const SgdHyper& h, View params, View grads, View velocity) {
  float* p = Data(params);
  const float* g = Data(grads);
  const float lr = h.lr, wd = h.weight_decay, mom = h.momentum;
  if (mom == 0.0f) {
    ForEachRange(params.count, [p, g, lr, wd](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) p[i] -= lr * (g[i] + wd * p[i]);
    });
    return;
  }
  float* v = Data(velocity);
  ForEachRange(params.count, [p, g, v, lr, wd, mom](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) {
      v[i] = mom * v[i] + (g[i] + wd * p[i]);
      p[i] -= lr * v[i];
    }
  });
}

void CpuBackend::AdamUpdate(const AdamHyper& h, View params, View grads, View m, View v) {
  float* p = Data(params);
  const float* g = Data(grads);
  float* ms = Data(m);
  float* vs = Data(v);
  const float b1 = h.beta1, b2 = h.beta2, wd = h.weight_decay, eps = h.eps;
  const AdamCorrection c = AdamBiasCorrection(h);
  const float step_size = c.step_size, c2_sqrt = c.c2_sqrt;
  // A plain loop of IEEE operations, each correctly rounded, none fused
  // (-ffp-contract=off for this file): an arm64 worker and an x86-64 hub
  // take the same step to the bit. Eigen arrays were as fast but not that:
  // with them an arm64 worker under QEMU drifted from the hub every step.
  // (-fno-math-errno lets std::sqrt vectorise here, 7x faster than scalar.)
  const float keep1 = 1.0f - b1, keep2 = 1.0f - b2;
  ForEachRange(params.count, [=](size_t b, size_t e) {
    float* __restrict pp = p + b;
    float* __restrict mp = ms + b;
    float* __restrict vp = vs + b;
    const float* __restrict gp = g + b;
    const size_t n = e - b;
    // Three passes, as Eigen's arrays ran it: one loop doing all three was
    // 3x slower on LeNet-5's real moments (0.185 against 0.057 ms a step).
    if (wd == 0.0f) {
      for (size_t i = 0; i < n; ++i) mp[i] = b1 * mp[i] + keep1 * gp[i];
      for (size_t i = 0; i < n; ++i) vp[i] = b2 * vp[i] + keep2 * (gp[i] * gp[i]);
    } else {
      for (size_t i = 0; i < n; ++i) mp[i] = b1 * mp[i] + keep1 * (gp[i] + wd * pp[i]);
      for (size_t i = 0; i < n; ++i) {
        const float gi = gp[i] + wd * pp[i];
        vp[i] = b2 * vp[i] + keep2 * (gi * gi);
      }
    }
    for (size_t i = 0; i < n; ++i) pp[i] -= step_size * mp[i] / (std::sqrt(vp[i]) / c2_sqrt + eps);
  });
}

}  // namespace mt::kernels
