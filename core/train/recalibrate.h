// Batch norm's running statistics recomputed for a set of weights (as
// "precise BN" does). Where the weights come from averaging, as on the hub,
// no forward pass ever ran on them in training mode: each worker's own
// statistics are of its own batches and weights. Before the hub evaluates,
// checkpoints or exports, it runs the averaged weights over training
// batches to give them statistics of their own.
#pragma once

#include <cstdint>

#include "core/data/dataset.h"
#include "core/model/model.h"

namespace mt {

// The batches the hub recalibrates over: with layer momentum 0.1, 40 leave
// 1.5% of the reset statistics.
constexpr int kRecalibrationBatches = 40;

// Runs `batches` batches of training samples (drawn by `seed`, at most the
// model's capacity each, 64 at most) forward in training mode, first
// resetting the statistics of layers that are not frozen to their initial
// values and then letting each layer's momentum average over the batches.
// Does nothing for a model without running statistics.
void RecalibrateRunningStats(Model& model, const Dataset& train, int batches, uint64_t seed);

}  // namespace mt
