#include "kernels/cpu/gemm_conv.h"

#include <algorithm>

#include "kernels/cpu/gemm.h"
#include "kernels/cpu/im2col.h"
#include "kernels/cpu/simd.h"
#include "kernels/cpu/thread_pool.h"

namespace mt::kernels {
namespace {

size_t RoundUp16(size_t x) { return (x + 15) & ~size_t{15}; }

// Where each chunk's scratch lives inside the workspace.
struct Layout {
  int group;         // samples unfolded side by side into one column matrix
  size_t col;        // patch x (group * ohw)
  size_t stage;      // out_c x (group * ohw), only when group > 1
  size_t d_weight;   // out_c x patch partial sum
  size_t d_bias;     // out_c partial sum
  size_t gemm;       // GEMM packing scratch
  size_t per_chunk;  // floats, a multiple of 16 so slices stay 64-byte aligned
};

// Small outputs give Eigen skinny products whose fixed per-call cost
// (blocking, packing) dominates, so several samples share one GEMM until the
// column matrix has about this many columns (measured on LeNet's second conv:
// 5 samples of 100 columns ran 15% faster than one), as long as every thread
// still gets a group.
constexpr int kTargetColumns = 512;

int GroupFor(const ConvGeometry& g, int threads) {
  const int ohw = std::max(1, g.out_h() * g.out_w());
  const int per_thread = (g.batch + threads - 1) / std::max(1, threads);
  return std::max(1, std::min(per_thread, kTargetColumns / ohw));
}

Layout MakeLayout(const ConvGeometry& g, int threads) {
  Layout l;
  l.group = GroupFor(g, threads);
  const size_t cols = static_cast<size_t>(l.group) * g.out_h() * g.out_w();
  l.col = 0;
  l.stage = l.col + RoundUp16(static_cast<size_t>(g.patch()) * cols);
  l.d_weight = l.stage + (l.group > 1 ? RoundUp16(static_cast<size_t>(g.out_c) * cols) : 0);
  l.d_bias = l.d_weight + RoundUp16(static_cast<size_t>(g.weight_count()));
  l.gemm = l.d_bias + RoundUp16(static_cast<size_t>(g.out_c));
  // The largest of the three products; smaller last groups need no more.
  const int c = static_cast<int>(cols), oc = g.out_c, patch = g.patch();
  const size_t gemm = std::max({GemmScratchFloats(oc, c, patch), GemmScratchFloats(oc, patch, c),
                                GemmScratchFloats(patch, c, oc)});
  l.per_chunk = l.gemm + RoundUp16(gemm);
  return l;
}

}  // namespace

size_t GemmConvWorkspaceFloats(const ConvGeometry& g, int threads) {
  return MakeLayout(g, threads).per_chunk * static_cast<size_t>(std::max(1, threads));
}

void GemmConvForward(ThreadPool& pool, const ConvGeometry& g, const float* in, const float* weight,
                     const float* bias, float* out, float* workspace) {
  const Layout l = MakeLayout(g, pool.size());
  const int ohw = g.out_h() * g.out_w();
  const int patch = g.patch(), oc = g.out_c;
  const int groups = (g.batch + l.group - 1) / l.group;
  pool.ParallelFor(groups, [&](int64_t begin, int64_t end, int chunk) {
    float* ws = workspace + l.per_chunk * chunk;
    float* col = ws + l.col;
    for (int64_t grp = begin; grp < end; ++grp) {
      const int n0 = static_cast<int>(grp) * l.group;
      const int count = std::min(l.group, g.batch - n0);
      const int ld = count * ohw;
      for (int i = 0; i < count; ++i) {
        Im2Col(g, in + static_cast<size_t>(n0 + i) * g.in_size(), col + i * ohw, ld);
      }
      float* dst = count == 1 ? out + static_cast<size_t>(n0) * g.out_size() : ws + l.stage;
      GemmSerial(false, false, oc, ld, patch, 1.0f, weight, patch, col, ld, 0.0f, dst, ld,
                 ws + l.gemm);
      for (int i = 0; i < count; ++i) {
        float* o = out + static_cast<size_t>(n0 + i) * g.out_size();
        for (int c = 0; c < oc; ++c) {
          const float b = bias ? bias[c] : 0.0f;
          float* orow = o + static_cast<size_t>(c) * ohw;
          if (count == 1) {
            if (bias) {
              for (int p = 0; p < ohw; ++p) orow[p] += b;
            }
          } else {
            const float* srow = dst + static_cast<size_t>(c) * ld + i * ohw;
            for (int p = 0; p < ohw; ++p) orow[p] = srow[p] + b;
          }
        }
      }
    }
  });
}

void GemmConvBackward(ThreadPool& pool, const ConvGeometry& g, const float* in, const float* weight,
                      const float* d_out, float* d_in, float* d_weight, float* d_bias,
                      float* workspace) {
  const Layout l = MakeLayout(g, pool.size());
  const int ohw = g.out_h() * g.out_w();
  const int patch = g.patch(), oc = g.out_c;
  const int groups = (g.batch + l.group - 1) / l.group;
  if (groups == 0) {
    if (d_weight) std::fill(d_weight, d_weight + g.weight_count(), 0.0f);
    if (d_bias) std::fill(d_bias, d_bias + oc, 0.0f);
    return;
  }
  const int chunks = pool.ParallelFor(groups, [&](int64_t begin, int64_t end, int chunk) {
    float* ws = workspace + l.per_chunk * chunk;
    float* col = ws + l.col;
    // Chunk 0 sums straight into the outputs; the others into scratch that
    // is added afterwards, in chunk order.
    float* dw = chunk == 0 ? d_weight : ws + l.d_weight;
    float* db = chunk == 0 ? d_bias : (d_bias ? ws + l.d_bias : nullptr);
    for (int64_t grp = begin; grp < end; ++grp) {
      const int n0 = static_cast<int>(grp) * l.group;
      const int count = std::min(l.group, g.batch - n0);
      const int ld = count * ohw;
      const bool first = grp == begin;
      for (int i = 0; d_weight && i < count; ++i) {
        Im2Col(g, in + static_cast<size_t>(n0 + i) * g.in_size(), col + i * ohw, ld);
      }
      const float* dy = d_out + static_cast<size_t>(n0) * g.out_size();
      if (count > 1) {
        // Lay the group's output gradients side by side like its columns.
        float* stage = ws + l.stage;
        for (int i = 0; i < count; ++i) {
          for (int c = 0; c < oc; ++c) {
            std::copy_n(d_out + static_cast<size_t>(n0 + i) * g.out_size() +
                            static_cast<size_t>(c) * ohw,
                        ohw, stage + static_cast<size_t>(c) * ld + i * ohw);
          }
        }
        dy = stage;
      }
      if (d_weight) {
        GemmSerial(false, true, oc, patch, ld, 1.0f, dy, ld, col, ld, first ? 0.0f : 1.0f, dw,
                   patch, ws + l.gemm);
      }
      if (db) {
        for (int c = 0; c < oc; ++c) {
          const float s = simd::Sum(dy + static_cast<size_t>(c) * ld, ld);
          db[c] = first ? s : db[c] + s;
        }
      }
      if (d_in) {
        // The columns are no longer needed, so their gradient reuses them.
        GemmSerial(true, false, patch, ld, oc, 1.0f, weight, patch, dy, ld, 0.0f, col, ld,
                   ws + l.gemm);
        for (int i = 0; i < count; ++i) {
          Col2Im(g, col + i * ohw, ld, d_in + static_cast<size_t>(n0 + i) * g.in_size());
        }
      }
    }
  });
  for (int w = 1; w < chunks && d_weight; ++w) {
    const float* ws = workspace + l.per_chunk * w;
    const float* dw = ws + l.d_weight;
    for (int i = 0; i < g.weight_count(); ++i) d_weight[i] += dw[i];
    if (d_bias) {
      const float* db = ws + l.d_bias;
      for (int c = 0; c < oc; ++c) d_bias[c] += db[c];
    }
  }
}

}  // namespace mt::kernels
