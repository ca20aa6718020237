// The op-table cases (backend_op_cases.h) of batch norm fused with a clip
// (kernels/batch_norm_clip.h) and of the one-pass replay of a training
// pass, clipped or not (kernels/batch_norm_replay.h): ReLU6's and ReLU's bounds, conv layouts and
// flat features, the backward pass writing d_x over d_y as a model calls
// it. Included by backend_op_cases.h, after the harness it uses.
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "kernels/batch_norm_clip.h"
#include "kernels/batch_norm_replay.h"

namespace mt::kernels::test_support {

inline void AddBatchNormClip(Table& t) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  struct ClipCase {
    BatchNormGeometry g;
    float hi;
  };
  for (const ClipCase s : std::vector<ClipCase>{{{8, 16, 49, 1e-5f, 0.1f}, 6.0f},
                                                {{4, 3, 1024, 1e-5f, 0.1f}, 6.0f},
                                                {{64, 10, 1, 1e-3f, 0.01f}, kInf},
                                                {{2, 32, 64, 1e-5f, 0.1f}, kInf}}) {
    const BatchNormGeometry g = s.g;
    const float hi = s.hi;
    const size_t n = size_t(g.batch) * g.channels * g.inner, c = g.channels;
    const std::string shape = Dims({g.batch, g.channels, g.inner}) + " hi " + std::to_string(hi);
    // Scales and shifts up to 4 clip outputs on both sides.
    t.Add(kBatchNormClipForwardTraining.op(), shape, [g, n, c, hi](CaseIo& io) {
      const View rm = io.Random(c, 52), rv = io.Random(c, 53, 0.5f, 2.0f);
      const View mean = io.Random(c, 54), invstd = io.Random(c, 55), y = io.Random(n, 56);
      kBatchNormClipForwardTraining(io.be(), g, io.Random(n, 50, 1.0f, 4.0f),
                                    io.Random(c, 51, -4, 4), io.Random(c, 57, -4, 4), rm, rv, mean,
                                    invstd, y, 0.0f, hi);
      io.Keep("y", y);
      io.Keep("save_mean", mean);
      io.Keep("save_invstd", invstd);
      io.Keep("running_mean", rm);
      io.Keep("running_var", rv);
    });
    t.Add(kBatchNormClipForwardInference.op(), shape, [g, n, c, hi](CaseIo& io) {
      const View invstd = io.Random(c, 55), y = io.Random(n, 56);
      kBatchNormClipForwardInference(io.be(), g, io.Random(n, 50, -4.0f, 8.0f),
                                     io.Random(c, 51, -4, 4), io.Random(c, 57, -4, 4),
                                     io.Random(c, 52), io.Random(c, 53, 0.5f, 2.0f), invstd, y,
                                     0.0f, hi);
      io.Keep("y", y);
      io.Keep("save_invstd", invstd);
    });
    for (const bool clip : {true, false}) {
      const Op forward = clip ? kBatchNormClipForwardTraining.op() : Op::kBatchNormForwardTraining;
      t.Add(
          kBatchNormReplay.op(), shape + (clip ? " replay clipped" : " replay"),
          [g, n, c, hi, clip](CaseIo& io) {
            const View x = io.Random(n, 50, 1.0f, 4.0f), scale = io.Random(c, 51, -4, 4);
            const View shift = io.Random(c, 57, -4, 4);
            const View rm = io.Random(c, 52), rv = io.Random(c, 53, 0.5f, 2.0f);
            const View mean = io.Random(c, 54), invstd = io.Random(c, 55), y = io.Random(n, 56);
            if (clip)
              kBatchNormClipForwardTraining(io.be(), g, x, scale, shift, rm, rv, mean, invstd, y,
                                            0.0f, hi);
            else
              io.be().BatchNormForwardTraining(g, x, scale, shift, rm, rv, mean, invstd, y);
            const View replayed = io.Random(n, 62);
            kBatchNormReplay(io.be(), g, x, scale, shift, mean, invstd, replayed, clip, 0.0f, hi);
            io.Keep("y", replayed);
          },
          OpSet{forward});
    }
    for (const bool batch_stats : {true, false}) {
      const Op forward =
          batch_stats ? kBatchNormClipForwardTraining.op() : kBatchNormClipForwardInference.op();
      t.Add(
          kBatchNormClipBackward.op(), shape + (batch_stats ? " batch stats" : " running stats"),
          [g, n, c, hi, batch_stats](CaseIo& io) {
            const View x = io.Random(n, 50, 1.0f, 4.0f), scale = io.Random(c, 51, -4, 4);
            const View shift = io.Random(c, 57, -4, 4);
            const View rm = io.Random(c, 52), rv = io.Random(c, 53, 0.5f, 2.0f);
            const View mean = batch_stats ? io.Random(c, 54) : rm;
            const View invstd = io.Random(c, 55), y = io.Random(n, 56);
            if (batch_stats)
              kBatchNormClipForwardTraining(io.be(), g, x, scale, shift, rm, rv, mean, invstd, y,
                                            0.0f, hi);
            else
              kBatchNormClipForwardInference(io.be(), g, x, scale, shift, rm, rv, invstd, y, 0.0f,
                                             hi);
            const View grad = io.Random(n, 61), d_scale = io.Random(c, 59),
                       d_shift = io.Random(c, 60);
            kBatchNormClipBackward(io.be(), g, x, grad, scale, shift, mean, invstd, batch_stats,
                                   grad, d_scale, d_shift, 0.0f, hi);
            io.Keep("d_x", grad);
            io.Keep("d_scale", d_scale);
            io.Keep("d_shift", d_shift);
          },
          OpSet{forward});
    }
  }
}

}  // namespace mt::kernels::test_support
