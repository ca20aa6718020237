#include "core/profile/memory_breakdown.h"

#include <algorithm>

namespace mt {

namespace {

int64_t StagingBytesPerSample(const Model& model) {
  return static_cast<int64_t>(model.input_shape().count() + 1) * sizeof(float);
}

}  // namespace

int64_t PredictBytesPerSample(const Model& model) {
  return static_cast<int64_t>(model.MemoryBytesPerSample()) + StagingBytesPerSample(model);
}

MemoryBreakdown PredictTrainingMemory(const Model& model, int capacity,
                                      size_t optimizer_slot_floats) {
  constexpr int64_t kFloat = sizeof(float);
  MemoryBreakdown m;
  m.weights = static_cast<int64_t>(model.ParamCount()) * kFloat;
  m.gradients = m.weights;
  m.running_stats = static_cast<int64_t>(model.RunningStatCount()) * kFloat;
  m.optimizer = static_cast<int64_t>(optimizer_slot_floats) * kFloat;
  m.workspaces = static_cast<int64_t>(model.WorkspaceBytes(capacity));
  for (const auto& layer : model.layers())
    m.workspaces += static_cast<int64_t>(layer->StateBytes(capacity));
  // MemoryBytes counts all of the model's buffers; what is left after the
  // parts named above is the activations' side.
  m.activations = static_cast<int64_t>(model.MemoryBytes(capacity)) - m.weights - m.gradients -
                  m.running_stats - m.workspaces;
  m.batch = StagingBytesPerSample(model) * capacity;
  return m;
}

MemoryLine PredictMemoryLine(const Model& model, size_t optimizer_slot_floats) {
  // Everything but the workspaces is fixed + per sample exactly. A conv
  // workspace either stops growing (per-thread GEMM groups) or grows by a
  // fixed amount per group of samples (the depthwise kernel's partial sums):
  // its slope for large batches, with what it exceeds that slope by at most
  // at small ones (one period of the groups is within the first 1024), give a
  // line never below it.
  auto workspace = [&](int c) { return static_cast<int64_t>(model.WorkspaceBytes(c)); };
  constexpr int kFar = 1 << 16, kPeriod = 1024;
  const int64_t slope = (workspace(kFar) - workspace(kFar / 2) + kFar / 2 - 1) / (kFar / 2);
  int64_t above = 0;
  for (int c = 1; c <= kPeriod; ++c) above = std::max(above, workspace(c) - slope * c);
  above = std::max(above, workspace(kFar) - slope * kFar);
  MemoryLine line;
  const int64_t exact = PredictBytesPerSample(model);
  line.per_sample = exact + slope;
  line.fixed =
      PredictTrainingMemory(model, 1, optimizer_slot_floats).Total() - exact - workspace(1) + above;
  return line;
}

}  // namespace mt
