#include "core/model/fusion.h"

#include <limits>

#include "core/layers/batch_norm2d.h"
#include "core/layers/relu.h"
#include "core/layers/relu6.h"
#include "kernels/batch_norm_clip.h"

namespace mt {
namespace {

struct ClipRange {
  float lo, hi;
};

// The clip an activation layer applies, if it is one batch norm can absorb.
bool ClipOf(const Layer& layer, ClipRange* range) {
  if (dynamic_cast<const ReLU*>(&layer)) {
    *range = {0.0f, std::numeric_limits<float>::infinity()};
    return true;
  }
  if (dynamic_cast<const ReLU6*>(&layer)) {
    *range = {0.0f, ReLU6::kCeiling};
    return true;
  }
  return false;
}

}  // namespace

int FuseBatchNormActivations(const std::vector<std::unique_ptr<Layer>>& layers,
                             const std::vector<std::vector<int>>& inputs,
                             const std::vector<char>& in_place) {
  int fused = 0;
  for (size_t i = 0; i + 1 < layers.size(); ++i) {
    auto* bn = dynamic_cast<BatchNorm2D*>(layers[i].get());
    Layer& act = *layers[i + 1];
    ClipRange range{};
    if (!bn || bn->clips() || !ClipOf(act, &range)) continue;
    // In place over the batch norm's output: its only reader, same backend.
    if (!in_place[i + 1] || inputs[i + 1].size() != 1 || inputs[i + 1][0] != static_cast<int>(i))
      continue;
    if (!bn->backend().SupportedOps().Contains(kernels::BatchNormClipOps())) continue;
    bn->FuseClip(range.lo, range.hi);
    act.set_absorbed_by(bn);
    ++fused;
  }
  return fused;
}

}  // namespace mt
