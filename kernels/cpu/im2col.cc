#include "kernels/cpu/im2col.h"

#include <algorithm>
#include <cstring>

namespace mt::kernels {
namespace {

// The output columns [lo, hi) whose input column ox * stride - pad + kx lies
// inside the image; computing them once per kernel column keeps the inner
// loops free of bounds checks.
struct Span {
  int lo, hi;
};

Span ValidOutputs(int out, int in, int stride, int pad, int k) {
  // First ox with ox * stride >= pad - k, last with ox * stride <= in - 1 + pad - k.
  const int first = pad - k;
  int lo = first <= 0 ? 0 : (first + stride - 1) / stride;
  const int last = in - 1 + pad - k;
  int hi = last < 0 ? 0 : last / stride + 1;
  lo = std::min(lo, out);
  hi = std::min(std::max(hi, lo), out);
  return {lo, hi};
}

}  // namespace

void Im2Col(const ConvGeometry& g, const float* in, float* col, int ldcol) {
  const int oh = g.out_h(), ow = g.out_w(), k = g.kernel, s = g.stride, pad = g.pad;
  for (int c = 0; c < g.in_c; ++c) {
    const float* plane = in + static_cast<size_t>(c) * g.in_h * g.in_w;
    for (int ky = 0; ky < k; ++ky) {
      const Span rows = ValidOutputs(oh, g.in_h, s, pad, ky);
      for (int kx = 0; kx < k; ++kx) {
        const Span cols = ValidOutputs(ow, g.in_w, s, pad, kx);
        float* dst = col + static_cast<size_t>((c * k + ky) * k + kx) * ldcol;
        std::fill(dst, dst + static_cast<size_t>(rows.lo) * ow, 0.0f);
        for (int oy = rows.lo; oy < rows.hi; ++oy) {
          float* d = dst + static_cast<size_t>(oy) * ow;
          const float* src =
              plane + static_cast<size_t>(oy * s - pad + ky) * g.in_w + (cols.lo * s - pad + kx);
          const int len = cols.hi - cols.lo;
          std::fill(d, d + cols.lo, 0.0f);
          if (s == 1) {
            std::memcpy(d + cols.lo, src, sizeof(float) * len);
          } else {
            for (int i = 0; i < len; ++i) d[cols.lo + i] = src[i * s];
          }
          std::fill(d + cols.hi, d + ow, 0.0f);
        }
        std::fill(dst + static_cast<size_t>(rows.hi) * ow, dst + static_cast<size_t>(oh) * ow,
                  0.0f);
      }
    }
  }
}

void Col2Im(const ConvGeometry& g, const float* col, int ldcol, float* d_in) {
  const int oh = g.out_h(), ow = g.out_w(), k = g.kernel, s = g.stride, pad = g.pad;
  std::fill(d_in, d_in + static_cast<size_t>(g.in_size()), 0.0f);
  for (int c = 0; c < g.in_c; ++c) {
    float* plane = d_in + static_cast<size_t>(c) * g.in_h * g.in_w;
    for (int ky = 0; ky < k; ++ky) {
      const Span rows = ValidOutputs(oh, g.in_h, s, pad, ky);
      for (int kx = 0; kx < k; ++kx) {
        const Span cols = ValidOutputs(ow, g.in_w, s, pad, kx);
        const float* srow = col + static_cast<size_t>((c * k + ky) * k + kx) * ldcol;
        for (int oy = rows.lo; oy < rows.hi; ++oy) {
          const float* src = srow + static_cast<size_t>(oy) * ow + cols.lo;
          float* d =
              plane + static_cast<size_t>(oy * s - pad + ky) * g.in_w + (cols.lo * s - pad + kx);
          const int len = cols.hi - cols.lo;
          if (s == 1) {
            for (int i = 0; i < len; ++i) d[i] += src[i];
          } else {
            for (int i = 0; i < len; ++i) d[i * s] += src[i];
          }
        }
      }
    }
  }
}

}  // namespace mt::kernels
