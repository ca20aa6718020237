#include "core/data/dataset.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

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
  const size_t plane = per_sample_ / static_cast<size_t>(sample_[0]);
  for (int c = 0; c < sample_[0]; ++c) {
    const float scale = scaling_.scale[c], offset = scaling_.offset[c];
    for (size_t i = c * plane; i < (c + 1) * plane; ++i) image[i] = p[i] * scale + offset;
  }
  return labels_[index];
}

PixelScaling PixelScaling::FromMeanStd(const std::vector<float>& mean,
                                       const std::vector<float>& std, int channels) {
  const auto fits = [channels](size_t n) { return n == 1 || n == static_cast<size_t>(channels); };
  if (channels < 1 || channels > 3 || !fits(mean.size()) || !fits(std.size()))
    throw std::invalid_argument("input mean and std: " + std::to_string(mean.size()) + " and " +
                                std::to_string(std.size()) + " values for " +
                                std::to_string(channels) + " channel(s); give 1 or " +
                                std::to_string(channels));
  PixelScaling s;
  for (int c = 0; c < 3; ++c) {
    const float m = mean[mean.size() == 1 ? 0 : std::min<size_t>(c, mean.size() - 1)];
    const float d = std[std.size() == 1 ? 0 : std::min<size_t>(c, std.size() - 1)];
    if (!(d > 0) || !std::isfinite(d) || !std::isfinite(m))
      throw std::invalid_argument("input std " + std::to_string(d) + " is not a positive number");
    // (pixel / 255 - m) / d
    s.scale[c] = 1.0f / (255.0f * d);
    s.offset[c] = -m / d;
  }
  return s;
}

std::vector<uint16_t> DatasetLabels(const Dataset& data) {
  std::vector<uint16_t> labels(data.Size());
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<uint16_t>(data.Label(i));
  return labels;
}

void FillBatch(const Dataset& data, const uint32_t* indices, int n, float* images,
               int32_t* labels) {
  const size_t per = data.SampleShape().count();
  for (int i = 0; i < n; ++i) labels[i] = data.Get(indices[i], images + per * i);
}

}  // namespace mt
