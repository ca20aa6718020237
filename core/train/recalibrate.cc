#include "core/train/recalibrate.h"

#include <algorithm>
#include <vector>

#include "core/data/sampler.h"
#include "core/train/batch_buffer.h"

namespace mt {

void RecalibrateRunningStats(Model& model, const Dataset& train, int batches, uint64_t seed) {
  if (model.RunningStatCount() == 0 || train.Size() == 0) return;
  // Fresh statistics for the layers that learn them; frozen ones keep theirs.
  std::vector<float> stats(model.RunningStatCount()), initial(model.RunningStatCount());
  model.GetRunningStats(stats.data());
  for (size_t i = 0; i < model.layers().size(); ++i) {
    const Layer& layer = *model.layers()[i];
    const size_t at = model.RunningStatOffsets()[i], count = layer.RunningStatCount();
    if (count == 0 || layer.frozen()) continue;
    layer.InitRunningStats(initial.data() + at);
    std::copy(initial.begin() + at, initial.begin() + at + count, stats.begin() + at);
  }
  model.SetRunningStats(stats.data());
  const int cap = std::min(model.capacity(), 64);
  const std::vector<uint32_t> order = EpochOrder(train.Size(), seed, 0);
  BatchBuffer batch(train.SampleShape(), cap);
  size_t next = 0;
  for (int b = 0; b < batches; ++b) {
    const int count = static_cast<int>(std::min<size_t>(cap, order.size()));
    if (next + count > order.size()) next = 0;
    batch.Fill(train, order.data() + next, count);
    next += count;
    model.SetBatch(batch.images(), batch.labels(), count);
    model.UpdateRunningStats(seed + b);
  }
}

}  // namespace mt
