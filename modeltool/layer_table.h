// What `mtmodel info` shows per layer: shapes, parameters, work and memory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/model/model.h"
#include "model.pb.h"

namespace mt {

struct LayerRow {
  std::string name, type;
  std::vector<std::string> inputs;  // layer names, or "input"
  std::string output_shape;         // per sample, "16x14x14"
  int64_t params = 0;
  int64_t running_stats = 0;
  // Per sample, forward pass: 2 per multiply-add (conv, dense), 2 per
  // element for batch norm's scale and shift, 1 per element summed (pools,
  // add); comparisons (ReLU, max-pool) count nothing.
  int64_t flops = 0;
  int64_t activations = 0;  // floats of the layer's output per sample
};

std::vector<LayerRow> DescribeLayers(const proto::ModelSpec& spec, const Model& model);

}  // namespace mt
