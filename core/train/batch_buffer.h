// Host staging for one batch: images normalised to float and int32 labels,
// sized once for the batch capacity so filling a batch allocates nothing.
#pragma once

#include <cstdint>
#include <vector>

#include "core/data/augment.h"
#include "core/data/dataset.h"

namespace mt {

class BatchBuffer {
 public:
  BatchBuffer(const Shape& sample, int capacity)
      : sample_count_(sample.count()), images_(sample_count_ * capacity), labels_(capacity) {}

  int capacity() const { return static_cast<int>(labels_.size()); }
  const float* images() const { return images_.data(); }
  const int32_t* labels() const { return labels_.data(); }

  void Fill(const Dataset& data, const uint32_t* indices, int n) {
    FillBatch(data, indices, n, images_.data(), labels_.data());
  }
  // The same, each sample then augmented with a key from `key` and its
  // index: the same step gives the same variants on any device.
  void Fill(const Dataset& data, const uint32_t* indices, int n, const Augmentation& augment,
            uint64_t key) {
    Fill(data, indices, n);
    if (!augment.any()) return;
    const Shape shape = data.SampleShape();
    for (int i = 0; i < n; ++i)
      Augment(augment, shape, key ^ (uint64_t{indices[i]} * 0x9E3779B97F4A7C15ull), data.scaling(),
              images_.data() + sample_count_ * static_cast<size_t>(i));
  }

 private:
  size_t sample_count_;
  std::vector<float> images_;
  std::vector<int32_t> labels_;
};

}  // namespace mt
