#include "kernels/cpu/dense_conv.h"

#include <algorithm>

#include "kernels/cpu/conv1x1.h"
#include "kernels/cpu/conv3x3.h"
#include "kernels/cpu/direct_conv.h"
#include "kernels/cpu/gemm_conv.h"

namespace mt::kernels {

size_t DenseConvWorkspaceFloats(const ConvGeometry& g, int threads) {
  if (Conv1x1Handles(g)) return Conv1x1WorkspaceFloats(g, threads);
  const bool conv3x3 = Conv3x3Handles(g);
  if (conv3x3 && Conv3x3HandlesInputGradient(g)) return Conv3x3WorkspaceFloats(g, threads);
  // Without the 3x3 kernel's input gradient, the direct or GEMM path
  // computes it.
  const bool direct_fwd = !conv3x3 && DirectConvFasterForward(g);
  const bool gemm_fwd = !conv3x3 && !direct_fwd;
  const bool direct_bwd = DirectConvFasterBackward(g);
  size_t count = conv3x3 ? Conv3x3WorkspaceFloats(g, threads) : 0;
  if (direct_fwd || direct_bwd) count = std::max(count, DirectConvWorkspaceFloats(g, threads));
  if (gemm_fwd || !direct_bwd) count = std::max(count, GemmConvWorkspaceFloats(g, threads));
  return count;
}

void DenseConvForward(ThreadPool& pool, const ConvGeometry& g, const float* in, const float* weight,
                      const float* bias, float* out, float* workspace) {
  if (Conv1x1Handles(g)) {
    Conv1x1Forward(pool, g, in, weight, bias, out, workspace);
  } else if (Conv3x3Handles(g)) {
    Conv3x3Forward(pool, g, in, weight, bias, out, workspace);
  } else if (DirectConvFasterForward(g)) {
    DirectConvForward(pool, g, in, weight, bias, out, workspace);
  } else {
    GemmConvForward(pool, g, in, weight, bias, out, workspace);
  }
}

void DenseConvBackward(ThreadPool& pool, const ConvGeometry& g, const float* in,
                       const float* weight, const float* d_out, float* d_in, float* d_weight,
                       float* d_bias, float* workspace) {
  if (Conv1x1Handles(g)) {
    Conv1x1Backward(pool, g, in, weight, d_out, d_in, d_weight, d_bias, workspace);
    return;
  }
  if (Conv3x3Handles(g)) {
    const bool own_d_in = Conv3x3HandlesInputGradient(g);
    if (d_weight || own_d_in) {
      Conv3x3Backward(pool, g, in, weight, d_out, own_d_in ? d_in : nullptr, d_weight, d_bias,
                      workspace);
    }
    if (own_d_in || !d_in) return;
    // The input gradient alone, below.
    d_weight = nullptr;
    d_bias = nullptr;
  }
  if (DirectConvFasterBackward(g)) {
    DirectConvBackward(pool, g, in, weight, d_out, d_in, d_weight, d_bias, workspace);
  } else {
    GemmConvBackward(pool, g, in, weight, d_out, d_in, d_weight, d_bias, workspace);
  }
}

}  // namespace mt::kernels
