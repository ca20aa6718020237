// The arithmetic each layer does per sample, for `mtmodel info` and the
// profiler's GFLOP/s. It reads the spec (kernel sizes and groups live there,
// not behind the Layer interface) and the built model (shapes, what trains).
#pragma once

#include <cstdint>
#include <vector>

#include "core/model/model.h"
#include "model.pb.h"

namespace mt {

// Forward pass of one layer per sample, as its kind's registry entry states
// (core/layers/layer_registry.h): 2 per multiply-add (conv, dense), 2 per
// element for batch norm's scale and shift, 1 per element summed (pools,
// add); comparisons (ReLU, max-pool) count nothing.
int64_t ForwardFlops(const proto::Layer& layer, const std::vector<Shape>& in, const Shape& out);

// ForwardFlops of every layer of `model`, built from `spec`, in model order.
std::vector<int64_t> ForwardFlopsPerSample(const proto::ModelSpec& spec, const Model& model);

// Backward pass per sample, from the forward figures: the input gradient
// costs what the forward pass did where a layer below needs it, and the
// weight gradient as much again where the layer trains (so a trained conv
// in the middle of a network costs 2x its forward pass, the first layer 1x);
// 0 where no backward pass runs.
std::vector<int64_t> BackwardFlopsPerSample(const Model& model,
                                            const std::vector<int64_t>& forward);

}  // namespace mt
