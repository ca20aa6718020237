#include "kernels/cpu/conv3x3.h"

#include <algorithm>
#include <cstdint>

#include "kernels/cpu/conv3x3_blocks.h"
#include "kernels/cpu/simd.h"
#include "kernels/cpu/thread_pool.h"

namespace mt::kernels {
namespace {

using conv3x3::kK;
using conv3x3::kLanes;
using conv3x3::kTaps;

size_t RoundUp16(size_t x) { return (x + 15) & ~size_t{15}; }

// Sizes and where each piece of the workspace lives.
struct Plan {
  int in_c, oc, in_h, in_w, oh, ow, pad;
  int wp;         // width of the zero-padded input planes
  size_t ps;      // their stride
  int gpad, gw;   // the output gradient padded by 2 - pad for the input gradient
  size_t gs;      // its plane stride
  size_t w_fwd;   // weights as [c][tap][o]
  size_t w_bwd;   // flipped weights as [o][tap][c]
  size_t shared;  // floats before the first chunk's slice
  size_t x, g, stage, part, db, per_chunk;
};

Plan MakePlan(const ConvGeometry& g) {
  Plan l;
  l.in_c = g.in_c;
  l.oc = g.out_c;
  l.in_h = g.in_h;
  l.in_w = g.in_w;
  l.oh = g.out_h();
  l.ow = g.out_w();
  l.pad = g.pad;
  l.wp = g.in_w + 2 * g.pad;
  l.ps = RoundUp16(size_t(g.in_h + 2 * g.pad) * l.wp);
  l.gpad = kK - 1 - g.pad;
  l.gw = l.ow + 2 * l.gpad;
  l.gs = RoundUp16(size_t(l.oh + 2 * l.gpad) * l.gw);
  const size_t weights = size_t(l.in_c) * kTaps * l.oc;
  l.w_fwd = 0;
  l.w_bwd = RoundUp16(weights);
  l.shared = l.w_bwd + RoundUp16(weights);
  l.x = 0;
  l.g = l.x + l.in_c * l.ps;
  l.stage = l.g + l.oc * l.gs;
  l.part =
      l.stage + RoundUp16(std::max(size_t(l.oh) * l.ow * l.oc, size_t(l.in_h) * l.in_w * l.in_c));
  l.db = l.part + RoundUp16(weights);
  l.per_chunk = l.db + RoundUp16(l.oc);
  return l;
}

// Copies `channels` planes of h x w into the interior of planes of width wp
// (stride `plane`) at row and column offset pad. Borders are left as they
// are: zero from the start of the call, never written.
void PadPlanes(const float* src, int channels, int h, int w, int pad, float* dst, int wp,
               size_t plane) {
  for (int c = 0; c < channels; ++c) {
    for (int y = 0; y < h; ++y) {
      simd::CopyShort(dst + c * plane + size_t(y + pad) * wp + pad, src + (size_t(c) * h + y) * w,
                      w);
    }
  }
}

// Size of part i when total is cut into the fewest parts of at most `most`,
// as equal as possible.
struct Split {
  int parts, total;
  Split(int total_, int most) : parts((total_ + most - 1) / most), total(total_) {}
  int Begin(int i) const { return int(int64_t(total) * i / parts); }
  int Size(int i) const { return Begin(i + 1) - Begin(i); }
};

// stage[(y * cols + x) * outs + o] = (bias[o]) + the convolution of the
// padded planes `in` (channels of stride plane, width wp) with w[c][tap][o]
// at output (y, x).
void ConvRows(const float* in, int channels, size_t plane, int wp, const float* w, int outs,
              const float* bias, int rows, int cols, float* stage) {
  const Split vectors(outs / kLanes, conv3x3::kMaxOutVectors);
  for (int vb = 0; vb < vectors.parts; ++vb) {
    const int ob = vectors.Size(vb), o0 = vectors.Begin(vb) * kLanes;
    const Split xs(cols, std::min(conv3x3::kMaxPositions, conv3x3::kMaxAcc / ob));
    for (int y = 0; y < rows; ++y) {
      for (int xb = 0; xb < xs.parts; ++xb) {
        const int x0 = xs.Begin(xb);
        const conv3x3::ConvArgs a{in + size_t(y) * wp + x0,
                                  channels,
                                  plane,
                                  wp,
                                  w + o0,
                                  outs,
                                  bias ? bias + o0 : nullptr,
                                  stage + (size_t(y) * cols + x0) * outs + o0,
                                  outs};
        conv3x3::kConvTable[(ob - 1) * conv3x3::kMaxPositions + (xs.Size(xb) - 1)](a);
      }
    }
  }
}

}  // namespace

bool Conv3x3Handles(const ConvGeometry& g) {
  return g.groups == 1 && g.kernel == kK && g.stride == 1 && g.pad <= kK - 1 &&
         g.out_c % kLanes == 0 && g.in_c > 0 && g.out_c > 0 && g.out_h() >= 1 && g.out_w() >= 1;
}

bool Conv3x3HandlesInputGradient(const ConvGeometry& g) {
  return Conv3x3Handles(g) && g.in_c % kLanes == 0;
}

size_t Conv3x3WorkspaceFloats(const ConvGeometry& g, int threads) {
  const Plan l = MakePlan(g);
  return l.shared + l.per_chunk * size_t(std::max(1, threads));
}

void Conv3x3Forward(ThreadPool& pool, const ConvGeometry& g, const float* in, const float* weight,
                    const float* bias, float* out, float* workspace) {
  const Plan l = MakePlan(g);
  float* wf = workspace + l.w_fwd;
  // Split too: on 128 channels one thread would take ~2% of the call.
  pool.ParallelFor(l.oc, [&](int64_t o0, int64_t o1, int) {
    for (int64_t o = o0; o < o1; ++o) {
      for (int c = 0; c < l.in_c; ++c) {
        for (int t = 0; t < kTaps; ++t) {
          wf[(size_t(c) * kTaps + t) * l.oc + o] = weight[(size_t(o) * l.in_c + c) * kTaps + t];
        }
      }
    }
  });
  const int ohw = l.oh * l.ow;
  pool.ParallelFor(g.batch, [&](int64_t begin, int64_t end, int chunk) {
    float* ws = workspace + l.shared + l.per_chunk * chunk;
    float* x = ws + l.x;
    float* stage = ws + l.stage;
    std::fill(x, x + l.in_c * l.ps, 0.0f);
    for (int64_t n = begin; n < end; ++n) {
      PadPlanes(in + n * g.in_size(), l.in_c, l.in_h, l.in_w, l.pad, x, l.wp, l.ps);
      ConvRows(x, l.in_c, l.ps, l.wp, wf, l.oc, bias, l.oh, l.ow, stage);
      conv3x3::Transpose(stage, l.oc, ohw, l.oc, out + n * g.out_size(), ohw);
    }
  });
}

void Conv3x3Backward(ThreadPool& pool, const ConvGeometry& g, const float* in, const float* weight,
                     const float* d_out, float* d_in, float* d_weight, float* d_bias,
                     float* workspace) {
  const Plan l = MakePlan(g);
  if (g.batch <= 0) {
    if (d_weight) std::fill(d_weight, d_weight + g.weight_count(), 0.0f);
    if (d_bias) std::fill(d_bias, d_bias + l.oc, 0.0f);
    return;
  }
  float* wb = workspace + l.w_bwd;
  if (d_in) {
    pool.ParallelFor(l.oc, [&](int64_t o0, int64_t o1, int) {
      for (int64_t o = o0; o < o1; ++o) {
        for (int c = 0; c < l.in_c; ++c) {
          for (int t = 0; t < kTaps; ++t) {
            wb[(size_t(o) * kTaps + t) * l.in_c + c] =
                weight[(size_t(o) * l.in_c + c) * kTaps + (kTaps - 1 - t)];
          }
        }
      }
    });
  }
  const int ohw = l.oh * l.ow, ihw = l.in_h * l.in_w;
  const Split grad_vectors(l.oc / kLanes, conv3x3::kMaxGradVectors);
  const int chunks = pool.ParallelFor(g.batch, [&](int64_t begin, int64_t end, int chunk) {
    float* ws = workspace + l.shared + l.per_chunk * chunk;
    float* x = ws + l.x;
    float* gp = ws + l.g;
    float* stage = ws + l.stage;
    float* part = ws + l.part;
    float* db = ws + l.db;
    std::fill(x, stage, 0.0f);
    std::fill(part, ws + l.per_chunk, 0.0f);
    for (int64_t n = begin; n < end; ++n) {
      const float* dy = d_out + n * g.out_size();
      for (int o = 0; o < l.oc; ++o) db[o] += simd::Sum(dy + size_t(o) * ohw, ohw);
      if (d_weight) {
        PadPlanes(in + n * g.in_size(), l.in_c, l.in_h, l.in_w, l.pad, x, l.wp, l.ps);
        conv3x3::Transpose(dy, ohw, l.oc, ohw, stage, l.oc);
        for (int vb = 0; vb < grad_vectors.parts; ++vb) {
          const int ob = grad_vectors.Size(vb), o0 = grad_vectors.Begin(vb) * kLanes;
          for (int c = 0; c < l.in_c; ++c) {
            const conv3x3::GradArgs a{x + c * l.ps,
                                      l.wp,
                                      stage + o0,
                                      l.oc,
                                      l.oh,
                                      l.ow,
                                      part + size_t(c) * kTaps * l.oc + o0,
                                      l.oc};
            conv3x3::kGradTable[ob - 1](a);
          }
        }
      }
      if (d_in) {
        PadPlanes(dy, l.oc, l.oh, l.ow, l.gpad, gp, l.gw, l.gs);
        ConvRows(gp, l.oc, l.gs, l.gw, wb, l.in_c, nullptr, l.in_h, l.in_w, stage);
        conv3x3::Transpose(stage, l.in_c, ihw, l.in_c, d_in + n * g.in_size(), ihw);
      }
    }
  });
  // Partials summed in chunk order, so every run gives the same bits.
  const float* ws0 = workspace + l.shared;
  if (d_weight) {
    pool.ParallelFor(l.in_c, [&](int64_t c0, int64_t c1, int) {
      for (int64_t c = c0; c < c1; ++c) {
        for (int t = 0; t < kTaps; ++t) {
          const size_t at = l.part + (size_t(c) * kTaps + t) * l.oc;
          for (int o = 0; o < l.oc; ++o) {
            float s = ws0[at + o];
            for (int ch = 1; ch < chunks; ++ch) s += ws0[l.per_chunk * ch + at + o];
            d_weight[(size_t(o) * l.in_c + c) * kTaps + t] = s;
          }
        }
      }
    });
  }
  if (d_bias) {
    for (int o = 0; o < l.oc; ++o) {
      float s = ws0[l.db + o];
      for (int ch = 1; ch < chunks; ++ch) s += ws0[l.per_chunk * ch + l.db + o];
      d_bias[o] = s;
    }
  }
}

}  // namespace mt::kernels
