#include "kernels/cpu/grouped_conv.h"

#include <algorithm>

#include "kernels/cpu/gemm.h"
#include "kernels/cpu/im2col.h"
#include "kernels/cpu/simd.h"
#include "kernels/cpu/thread_pool.h"

namespace mt::kernels {
namespace {

size_t RoundUp16(size_t x) { return (x + 15) & ~size_t{15}; }

struct Layout {
  ConvGeometry sub;  // one group of one sample: groups == 1
  int ohw, patch, opg;
  size_t col, d_weight, d_bias, gemm, per_chunk;
};

Layout MakeLayout(const ConvGeometry& g) {
  Layout l;
  l.sub = g;
  l.sub.batch = 1;
  l.sub.groups = 1;
  l.sub.in_c = g.group_in_c();
  l.sub.out_c = g.group_out_c();
  l.ohw = g.out_h() * g.out_w();
  l.patch = g.patch();
  l.opg = g.group_out_c();
  l.col = 0;
  l.d_weight = l.col + RoundUp16(size_t(l.patch) * l.ohw);
  l.d_bias = l.d_weight + RoundUp16(size_t(g.weight_count()));
  l.gemm = l.d_bias + RoundUp16(size_t(g.out_c));
  const size_t gemm =
      std::max({GemmScratchFloats(l.opg, l.ohw, l.patch), GemmScratchFloats(l.opg, l.patch, l.ohw),
                GemmScratchFloats(l.patch, l.ohw, l.opg)});
  l.per_chunk = l.gemm + RoundUp16(gemm);
  return l;
}

}  // namespace

size_t GroupedConvWorkspaceFloats(const ConvGeometry& g, int threads) {
  return MakeLayout(g).per_chunk * static_cast<size_t>(std::max(1, threads));
}

void GroupedConvForward(ThreadPool& pool, const ConvGeometry& g, const float* in,
                        const float* weight, const float* bias, float* out, float* workspace) {
  const Layout l = MakeLayout(g);
  const size_t in_slice = size_t(l.sub.in_c) * g.in_h * g.in_w;
  const size_t out_slice = size_t(l.opg) * l.ohw;
  const size_t w_slice = size_t(l.opg) * l.patch;
  pool.ParallelFor(g.batch, [&](int64_t begin, int64_t end, int chunk) {
    float* ws = workspace + l.per_chunk * chunk;
    float* col = ws + l.col;
    for (int64_t n = begin; n < end; ++n) {
      for (int gi = 0; gi < g.groups; ++gi) {
        Im2Col(l.sub, in + n * g.in_size() + gi * in_slice, col, l.ohw);
        float* o = out + n * g.out_size() + gi * out_slice;
        GemmSerial(false, false, l.opg, l.ohw, l.patch, 1.0f, weight + gi * w_slice, l.patch, col,
                   l.ohw, 0.0f, o, l.ohw, ws + l.gemm);
        if (!bias) continue;
        for (int c = 0; c < l.opg; ++c) {
          const float b = bias[gi * l.opg + c];
          float* row = o + size_t(c) * l.ohw;
          for (int p = 0; p < l.ohw; ++p) row[p] += b;
        }
      }
    }
  });
}

void GroupedConvBackward(ThreadPool& pool, const ConvGeometry& g, const float* in,
                         const float* weight, const float* d_out, float* d_in, float* d_weight,
                         float* d_bias, float* workspace) {
  const Layout l = MakeLayout(g);
  const size_t in_slice = size_t(l.sub.in_c) * g.in_h * g.in_w;
  const size_t out_slice = size_t(l.opg) * l.ohw;
  const size_t w_slice = size_t(l.opg) * l.patch;
  if (d_weight) std::fill(d_weight, d_weight + g.weight_count(), 0.0f);
  if (d_bias) std::fill(d_bias, d_bias + g.out_c, 0.0f);
  const int chunks = pool.ParallelFor(g.batch, [&](int64_t begin, int64_t end, int chunk) {
    float* ws = workspace + l.per_chunk * chunk;
    float* col = ws + l.col;
    // Chunk 0 sums straight into the outputs; the others into scratch that
    // is added afterwards, in chunk order.
    float* dw = chunk == 0 ? d_weight : ws + l.d_weight;
    float* db = chunk == 0 ? d_bias : ws + l.d_bias;
    if (chunk != 0 && d_weight) std::fill(dw, dw + g.weight_count(), 0.0f);
    if (chunk != 0 && d_bias) std::fill(db, db + g.out_c, 0.0f);
    for (int64_t n = begin; n < end; ++n) {
      for (int gi = 0; gi < g.groups; ++gi) {
        const float* dy = d_out + n * g.out_size() + gi * out_slice;
        if (d_weight) {
          Im2Col(l.sub, in + n * g.in_size() + gi * in_slice, col, l.ohw);
          GemmSerial(false, true, l.opg, l.patch, l.ohw, 1.0f, dy, l.ohw, col, l.ohw, 1.0f,
                     dw + gi * w_slice, l.patch, ws + l.gemm);
          if (d_bias) {
            for (int c = 0; c < l.opg; ++c) {
              db[gi * l.opg + c] += simd::Sum(dy + size_t(c) * l.ohw, l.ohw);
            }
          }
        }
        if (!d_in) continue;
        // The columns are no longer needed, so their gradient reuses them.
        GemmSerial(true, false, l.patch, l.ohw, l.opg, 1.0f, weight + gi * w_slice, l.patch, dy,
                   l.ohw, 0.0f, col, l.ohw, ws + l.gemm);
        Col2Im(l.sub, col, l.ohw, d_in + n * g.in_size() + gi * in_slice);
      }
    }
  });
  for (int w = 1; w < chunks; ++w) {
    const float* ws = workspace + l.per_chunk * w;
    if (d_weight) {
      const float* dw = ws + l.d_weight;
      for (int i = 0; i < g.weight_count(); ++i) d_weight[i] += dw[i];
    }
    if (d_bias) {
      const float* db = ws + l.d_bias;
      for (int c = 0; c < g.out_c; ++c) d_bias[c] += db[c];
    }
  }
}

}  // namespace mt::kernels
