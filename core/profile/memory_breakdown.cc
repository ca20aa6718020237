#include "core/profile/memory_breakdown.h"

namespace mt {

MemoryBreakdown PredictTrainingMemory(const Model& model, int capacity,
                                      size_t optimizer_slot_floats) {
  constexpr int64_t kFloat = sizeof(float);
  MemoryBreakdown m;
  m.weights = static_cast<int64_t>(model.ParamCount()) * kFloat;
  m.gradients = m.weights;
  m.running_stats = static_cast<int64_t>(model.RunningStatCount()) * kFloat;
  m.optimizer = static_cast<int64_t>(optimizer_slot_floats) * kFloat;
  for (const auto& layer : model.layers())
    m.workspaces += static_cast<int64_t>(layer->StateBytes(capacity));
  // MemoryBytes counts all of the model's buffers; what is left after the
  // parts named above is the activations' side.
  m.activations = static_cast<int64_t>(model.MemoryBytes(capacity)) - m.weights - m.gradients -
                  m.running_stats - m.workspaces;
  m.batch = static_cast<int64_t>(model.input_shape().count() + 1) * kFloat * capacity;
  return m;
}

}  // namespace mt
