#include "core/data/dataset.h"

namespace mt {

InMemoryDataset::InMemoryDataset(Shape sample, int classes, std::vector<uint8_t> pixels,
                                 std::vector<uint8_t> labels)
    : sample_(sample),
      classes_(classes),
      per_sample_(sample.count()),
      pixels_(std::move(pixels)),
      labels_(std::move(labels)) {
  if (pixels_.size() != per_sample_ * labels_.size())
    throw DataError("dataset: " + std::to_string(pixels_.size()) + " pixel bytes for " +
                    std::to_string(labels_.size()) + " samples of " + sample.ToString());
}

int InMemoryDataset::Get(size_t index, float* image) const {
  const uint8_t* p = pixels_.data() + index * per_sample_;
  for (size_t i = 0; i < per_sample_; ++i) image[i] = p[i] * kPixelScale + kPixelOffset;
  return labels_[index];
}

void FillBatch(const Dataset& data, const uint32_t* indices, int n, float* images,
               int32_t* labels) {
  const size_t per = data.SampleShape().count();
  for (int i = 0; i < n; ++i) labels[i] = data.Get(indices[i], images + per * i);
}

}  // namespace mt
