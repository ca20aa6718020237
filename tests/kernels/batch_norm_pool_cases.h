// The op-table cases (backend_op_cases.h) of batch normalisation, average
// and global average pooling, and clip: MobileNet's layers at small batches,
// flat and single-value channels, windows that leave inputs uncovered or
// overlap. Included by backend_op_cases.h, after the harness it uses.
#pragma once

#include <string>
#include <vector>

namespace mt::kernels::test_support {

inline void AddAveragePooling(Table& t) {
  // {batch, channels, in_h, in_w, size, stride}
  for (const PoolGeometry g : std::vector<PoolGeometry>{{8, 16, 10, 10, 2, 2},
                                                        {2, 3, 7, 9, 2, 2},
                                                        {2, 2, 9, 9, 3, 2},
                                                        {2, 2, 6, 7, 3, 1},
                                                        {1, 1, 5, 5, 5, 5},
                                                        {4, 32, 14, 14, 2, 2}}) {
    const size_t in_n = size_t(g.batch) * g.in_size(), out_n = size_t(g.batch) * g.out_size();
    const std::string shape = Dims({g.batch, g.channels, g.in_h, g.in_w}) + " size " +
                              std::to_string(g.size) + " stride " + std::to_string(g.stride);
    t.Add(Op::kAvgPoolForward, shape, [g, in_n, out_n](CaseIo& io) {
      const View out = io.Random(out_n, 41);
      io.be().AvgPoolForward(g, io.Random(in_n, 40), out);
      io.Keep("out", out);
    });
    t.Add(Op::kAvgPoolBackward, shape, [g, in_n, out_n](CaseIo& io) {
      const View d_in = io.Random(in_n, 43);
      io.be().AvgPoolBackward(g, io.Random(out_n, 42), d_in);
      io.Keep("d_in", d_in);
    });
  }
  struct Planes {
    int planes, inner;
  };
  // MobileNet's last 7x7 planes, flat, one long plane.
  for (const Planes s : std::vector<Planes>{{8 * 64, 49}, {6, 1}, {3, 112 * 112}, {5, 17}}) {
    const size_t n = size_t(s.planes) * s.inner;
    t.Add(Op::kGlobalAvgPoolForward, Dims({s.planes, s.inner}), [s, n](CaseIo& io) {
      const View out = io.Random(s.planes, 45);
      io.be().GlobalAvgPoolForward(io.Random(n, 44), out, s.planes, s.inner);
      io.Keep("out", out);
    });
    t.Add(Op::kGlobalAvgPoolBackward, Dims({s.planes, s.inner}), [s, n](CaseIo& io) {
      const View d_in = io.Random(n, 47);
      io.be().GlobalAvgPoolBackward(io.Random(s.planes, 46), d_in, s.planes, s.inner);
      io.Keep("d_in", d_in);
    });
  }
}

inline void AddBatchNorm(Table& t) {
  // {batch, channels, inner, epsilon, momentum}: conv layouts, flat
  // features, one value per channel (no unbiased variance), a large plane.
  for (const BatchNormGeometry g : std::vector<BatchNormGeometry>{{8, 16, 49, 1e-5f, 0.1f},
                                                                  {4, 3, 100, 1e-3f, 0.01f},
                                                                  {64, 10, 1, 1e-5f, 0.1f},
                                                                  {2, 32, 196, 1e-5f, 0.1f},
                                                                  {1, 5, 1, 1e-5f, 0.1f},
                                                                  {8, 2, 112 * 112, 1e-5f, 0.1f}}) {
    const size_t n = size_t(g.batch) * g.channels * g.inner;
    const size_t c = g.channels;
    const std::string shape = Dims({g.batch, g.channels, g.inner});
    // Inputs with a mean well away from 0, as after a conv with a bias.
    t.Add(Op::kBatchNormForwardTraining, shape, [g, n, c](CaseIo& io) {
      const View rm = io.Random(c, 52), rv = io.Random(c, 53, 0.5f, 2.0f);
      const View mean = io.Random(c, 54), invstd = io.Random(c, 55), y = io.Random(n, 56);
      io.be().BatchNormForwardTraining(g, io.Random(n, 50, 1.0f, 4.0f), io.Random(c, 51),
                                       io.Random(c, 57), rm, rv, mean, invstd, y);
      io.Keep("y", y);
      io.Keep("save_mean", mean);
      io.Keep("save_invstd", invstd);
      io.Keep("running_mean", rm);
      io.Keep("running_var", rv);
    });
    t.Add(Op::kBatchNormForwardInference, shape, [g, n, c](CaseIo& io) {
      const View invstd = io.Random(c, 55), y = io.Random(n, 56);
      io.be().BatchNormForwardInference(g, io.Random(n, 50, 1.0f, 4.0f), io.Random(c, 51),
                                        io.Random(c, 57), io.Random(c, 52),
                                        io.Random(c, 53, 0.5f, 2.0f), invstd, y);
      io.Keep("y", y);
      io.Keep("save_invstd", invstd);
    });
    // Backward after a training forward pass (all gradients, or the input
    // gradient only) and after an inference one (a frozen layer's input
    // gradient, or an unfrozen layer evaluated then differentiated).
    struct Variant {
      const char* name;
      bool batch_stats, d_x, d_params;
    };
    for (const Variant v : std::vector<Variant>{{"batch stats", true, true, true},
                                                {"batch stats, no d_x", true, false, true},
                                                {"batch stats, d_x only", true, true, false},
                                                {"running stats, frozen", false, true, false},
                                                {"running stats", false, true, true}}) {
      const OpSet forward{v.batch_stats ? Op::kBatchNormForwardTraining
                                        : Op::kBatchNormForwardInference};
      t.Add(
          Op::kBatchNormBackward, shape + " " + v.name,
          [g, n, c, v](CaseIo& io) {
            const View x = io.Random(n, 50, 1.0f, 4.0f), scale = io.Random(c, 51);
            const View rm = io.Random(c, 52), rv = io.Random(c, 53, 0.5f, 2.0f);
            const View mean = v.batch_stats ? io.Random(c, 54) : rm;
            const View invstd = io.Random(c, 55), y = io.Random(n, 56);
            if (v.batch_stats) {
              io.be().BatchNormForwardTraining(g, x, scale, io.Random(c, 57), rm, rv, mean, invstd,
                                               y);
            } else {
              io.be().BatchNormForwardInference(g, x, scale, io.Random(c, 57), rm, rv, invstd, y);
            }
            const View d_x = io.Random(n, 58), d_scale = io.Random(c, 59),
                       d_shift = io.Random(c, 60);
            io.be().BatchNormBackward(g, x, io.Random(n, 61), scale, mean, invstd, v.batch_stats,
                                      v.d_x ? d_x : View{}, v.d_params ? d_scale : View{},
                                      v.d_params ? d_shift : View{});
            io.Keep("d_x", d_x);
            io.Keep("d_scale", d_scale);
            io.Keep("d_shift", d_shift);
          },
          forward);
    }
  }
}

inline void AddClip(Table& t) {
  for (size_t n : {size_t(1), size_t(37), size_t(64 * 6 * 28 * 28)}) {
    t.Add(Op::kClipForward, Dims({int(n)}), [n](CaseIo& io) {
      const View y = io.Random(n, 63);
      io.be().ClipForward(io.Random(n, 62, -8.0f, 8.0f), y, 0.0f, 6.0f);
      io.Keep("y", y);
    });
    for (const bool in_place : {true, false}) {
      t.Add(Op::kClipBackward, Dims({int(n)}) + (in_place ? " in place" : ""),
            [n, in_place](CaseIo& io) {
              const View d_out = io.Random(n, 64), d_in = in_place ? d_out : io.Random(n, 65);
              const View out = io.Random(n, 62, -8.0f, 8.0f);
              io.be().ClipForward(out, out, 0.0f, 6.0f);
              io.be().ClipBackward(out, d_out, d_in, 0.0f, 6.0f);
              io.Keep("d_in", d_in);
            },
            {Op::kClipForward});
    }
  }
}

}  // namespace mt::kernels::test_support
