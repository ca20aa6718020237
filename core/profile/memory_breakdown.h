// What training a model takes in memory, part by part, as the model and the
// optimizer size their buffers: the prediction the batch caps rely on
// (worker/local_trainer.h's CheckBatchFits, the hub's max_batch), which the
// profiler sets against the resident set the kernel measures.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/data/dataset.h"
#include "core/model/model.h"

namespace mt {

struct MemoryBreakdown {
  int64_t weights = 0;        // parameters
  int64_t gradients = 0;      // their gradient buffer
  int64_t running_stats = 0;  // batch norm's means and variances
  int64_t optimizer = 0;      // slot buffers: momentum, Adam's m and v
  // Activations, their gradient buffers, copies between backends and
  // mirrored parameters, labels and predictions: what grows with the batch.
  int64_t activations = 0;
  int64_t workspaces = 0;  // the shared conv workspace; layer state: pooling argmax, dropout masks
  int64_t batch = 0;       // host staging of one batch: images as floats and labels

  int64_t Total() const {
    return weights + gradients + running_stats + optimizer + activations + workspaces + batch;
  }
};

// At a batch capacity, with `optimizer_slot_floats` floats of optimizer
// state (Optimizer::slot_values()).
MemoryBreakdown PredictTrainingMemory(const Model& model, int capacity,
                                      size_t optimizer_slot_floats);

// What each more sample adds to PredictTrainingMemory's total, exactly:
// the model's per-sample buffers and the batch staging. The rest (weights,
// the optimizer, the workspaces) stops growing after a few samples.
int64_t PredictBytesPerSample(const Model& model);

// PredictTrainingMemory as a line, for whoever turns a memory budget into a
// batch cap by division (the hub, for its workers): never below the
// prediction. Its per-sample part is exact but for the conv workspace's
// growth (the depthwise kernel keeps partial sums per group of samples);
// the fixed part holds what the workspace exceeds that growth by.
struct MemoryLine {
  int64_t fixed = 0, per_sample = 0;
};
MemoryLine PredictMemoryLine(const Model& model, size_t optimizer_slot_floats);

// What a dataset holds in memory (Dataset::HeldBytes).
inline int64_t HeldDatasetBytes(const Dataset& data) {
  return static_cast<int64_t>(data.HeldBytes());
}

}  // namespace mt
