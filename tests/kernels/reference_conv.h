// Convolution in double precision, loop by loop, with groups: the reference
// the kernel tests check every backend and every CPU path against.
#pragma once

#include <cstddef>
#include <vector>

#include "kernels/geometry.h"

namespace mt::kernels::test_reference {

struct Ref {
  std::vector<double> out, d_in, d_weight, d_bias;
};

inline Ref ReferenceConv(const ConvGeometry& g, const std::vector<float>& in,
                         const std::vector<float>& w, const std::vector<float>& bias,
                         const std::vector<float>& d_out) {
  const int oh = g.out_h(), ow = g.out_w(), k = g.kernel;
  const int cpg = g.group_in_c(), opg = g.group_out_c();
  Ref r;
  r.out.assign(size_t(g.batch) * g.out_size(), 0.0);
  r.d_in.assign(size_t(g.batch) * g.in_size(), 0.0);
  r.d_weight.assign(g.weight_count(), 0.0);
  r.d_bias.assign(g.out_c, 0.0);
  for (int n = 0; n < g.batch; ++n) {
    for (int o = 0; o < g.out_c; ++o) {
      const int c0 = (o / opg) * cpg;
      for (int oy = 0; oy < oh; ++oy) {
        for (int ox = 0; ox < ow; ++ox) {
          const size_t oi = ((size_t(n) * g.out_c + o) * oh + oy) * ow + ox;
          double s = bias.empty() ? 0.0 : bias[o];
          const double dy = d_out[oi];
          r.d_bias[o] += dy;
          for (int c = 0; c < cpg; ++c) {
            for (int ky = 0; ky < k; ++ky) {
              for (int kx = 0; kx < k; ++kx) {
                const int iy = oy * g.stride - g.pad + ky, ix = ox * g.stride - g.pad + kx;
                if (iy < 0 || iy >= g.in_h || ix < 0 || ix >= g.in_w) continue;
                const size_t ii = ((size_t(n) * g.in_c + c0 + c) * g.in_h + iy) * g.in_w + ix;
                const size_t wi = ((size_t(o) * cpg + c) * k + ky) * k + kx;
                s += double(in[ii]) * w[wi];
                r.d_weight[wi] += dy * in[ii];
                r.d_in[ii] += dy * w[wi];
              }
            }
          }
          r.out[oi] = s;
        }
      }
    }
  }
  return r;
}

}  // namespace mt::kernels::test_reference
