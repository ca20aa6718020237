// Fusion of layer pairs whose second layer's work the first can do in the
// passes it makes anyway, decided once the model is placed and shaped.
#pragma once

#include <memory>
#include <vector>

#include "core/layers/layer.h"

namespace mt {

// Fuses each BatchNorm2D (layer i) with the ReLU or ReLU6 (layer i + 1)
// that runs in place over its output (in_place[i + 1], so it is that
// output's only reader, on the same backend) where the backend has the
// fused ops (kernels/batch_norm_clip.h): the batch norm clips its output and
// masks its gradient, and the activation is marked absorbed (Layer::
// absorbed_by) and does nothing. Both layers stay in the model (export,
// checkpoints and the profile see them). `inputs` lists per layer the
// layers it reads. Returns how many pairs were fused.
int FuseBatchNormActivations(const std::vector<std::unique_ptr<Layer>>& layers,
                             const std::vector<std::vector<int>>& inputs,
                             const std::vector<char>& in_place);

}  // namespace mt
