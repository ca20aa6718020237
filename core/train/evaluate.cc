#include "core/train/evaluate.h"

#include <algorithm>

#include "core/train/batch_buffer.h"

namespace mt {

EvalResult Evaluate(Model& model, const Dataset& data) {
  const int cap = model.capacity();
  BatchBuffer batch(data.SampleShape(), cap);
  std::vector<uint32_t> indices(cap);
  std::vector<int32_t> predicted(cap);
  EvalResult r;
  double loss = 0;
  int64_t correct = 0;
  const size_t n = data.Size();
  for (size_t start = 0; start < n; start += cap) {
    const int count = static_cast<int>(std::min<size_t>(cap, n - start));
    for (int i = 0; i < count; ++i) indices[i] = static_cast<uint32_t>(start + i);
    batch.Fill(data, indices.data(), count);
    model.SetBatch(batch.images(), batch.labels(), count);
    loss += model.Evaluate(predicted.data());
    for (int i = 0; i < count; ++i) correct += predicted[i] == batch.labels()[i];
  }
  r.samples = static_cast<int64_t>(n);
  if (n > 0) {
    r.accuracy = static_cast<double>(correct) / n;
    r.mean_loss = loss / n;
  }
  return r;
}

}  // namespace mt
