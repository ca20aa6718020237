// The op-table cases (backend_op_cases.h) of issue 29's structural ops:
// padded max and average pooling (PoolGeometry::pad, Op::kPaddedPool) and
// the row scale of squeeze-and-excitation (a table op).
// Included by backend_op_cases.h, after the harness it uses.
#pragma once

#include <string>
#include <vector>

#include "tests/kernels/row_scale_op.h"

namespace mt::kernels::test_support {

inline void AddStructuralOps(Table& t) {
  struct Padded {
    int batch, channels, h, w, size, stride, pad;
  };
  // MobileNetV3's 3x3 stride-2 stem pool, a SqueezeNet-style 3x3 stride-1 smoothing, odd sizes.
  for (const Padded p : std::vector<Padded>{{4, 16, 16, 16, 3, 2, 1},
                                            {2, 8, 7, 9, 3, 1, 1},
                                            {3, 2, 5, 6, 2, 2, 1},
                                            {1, 3, 11, 11, 5, 3, 2}}) {
    for (const bool count_pad : {false, true}) {
      PoolGeometry g;
      g.batch = p.batch, g.channels = p.channels, g.in_h = p.h, g.in_w = p.w;
      g.size = p.size, g.stride = p.stride, g.pad = p.pad, g.count_pad = count_pad;
      const size_t in_n = size_t(g.batch) * g.in_size(), out_n = size_t(g.batch) * g.out_size();
      const std::string shape = Dims({g.batch, g.channels, g.in_h, g.in_w}) + " size " +
                                std::to_string(g.size) + " pad " + std::to_string(g.pad) +
                                (count_pad ? " counted" : "");
      t.Add(Op::kPaddedPool, "avg forward " + shape,
            [g, in_n, out_n](CaseIo& io) {
              const View out = io.Random(out_n, 51);
              io.be().AvgPoolForward(g, io.Random(in_n, 50), out);
              io.Keep("out", out);
            },
            {Op::kAvgPoolForward});
      t.Add(Op::kPaddedPool, "avg backward " + shape,
            [g, in_n, out_n](CaseIo& io) {
              const View d_in = io.Random(in_n, 53);
              io.be().AvgPoolBackward(g, io.Random(out_n, 52), d_in);
              io.Keep("d_in", d_in);
            },
            {Op::kAvgPoolBackward});
      if (count_pad) continue;  // a max has no count
      t.Add(Op::kPaddedPool, "max " + shape,
            [g, in_n, out_n](CaseIo& io) {
              const View out = io.Random(out_n, 55);
              const View argmax = io.Random(out_n, 58);
              io.be().MaxPoolForward(g, io.Random(in_n, 54), out, argmax);
              const View d_in = io.Random(in_n, 56);
              io.be().MaxPoolBackward(g, io.Random(out_n, 57), argmax, d_in);
              io.Keep("out", out);
              io.Keep("argmax", argmax, true);
              io.Keep("d_in", d_in);
            },
            {Op::kMaxPoolForward, Op::kMaxPoolBackward});
    }
  }
  struct Rows {
    int rows, inner;
  };
  // An SE gate on 32 channels of 8x8 at batch 4, a same-shaped product, one long row.
  for (const Rows s : std::vector<Rows>{{4 * 32, 64}, {1000, 1}, {3, 70000}}) {
    const size_t n = size_t(s.rows) * s.inner;
    t.Add(kRowScaleForward.op(), Dims({s.rows, s.inner}), [s, n](CaseIo& io) {
      const View out = io.Random(n, 61);
      kRowScaleForward(io.be(), io.Random(n, 60), io.Random(s.rows, 62), out, s.rows, s.inner);
      io.Keep("out", out);
    });
    t.Add(kRowScaleBackward.op(), Dims({s.rows, s.inner}), [s, n](CaseIo& io) {
      const View d_x = io.Random(n, 64), d_scale = io.Random(s.rows, 65);
      kRowScaleBackward(io.be(), io.Random(n, 66), io.Random(s.rows, 67), io.Random(n, 68), d_x,
                        d_scale, s.rows, s.inner);
      io.Keep("d_x", d_x);
      io.Keep("d_scale", d_scale);
    });
  }
}

}  // namespace mt::kernels::test_support
