// Host staging for one batch: images normalised to float and int32 labels,
// sized once for the batch capacity so filling a batch allocates nothing.
#pragma once

#include <cstdint>
#include <vector>

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

 private:
  size_t sample_count_;
  std::vector<float> images_;
  std::vector<int32_t> labels_;
};

}  // namespace mt
