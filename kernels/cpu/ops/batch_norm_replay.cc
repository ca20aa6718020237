// kernels/batch_norm_replay.h's op on the CPU: BatchNormReplay
// (kernels/cpu/batch_norm.h), the training pass's output pass alone.
#include "kernels/batch_norm_replay.h"

#include "kernels/cpu/batch_norm.h"
#include "kernels/cpu/cpu_backend.h"

namespace mt::kernels {
namespace {

void Replay(CpuBackend& be, const BatchNormGeometry& g, View x, View scale, View shift,
            View save_mean, View save_invstd, View y, bool clip, float lo, float hi) {
  using D = CpuBackend;
  BatchNormReplay(be.pool(), g, D::Data(x), D::Data(scale), D::Data(shift), D::Data(save_mean),
                  D::Data(save_invstd), D::Data(y), OutputClip{clip, lo, hi});
}

}  // namespace

MT_REGISTER_OP("batch_norm_replay", Replay);

}  // namespace mt::kernels
