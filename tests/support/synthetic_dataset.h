// A learnable in-memory dataset for tests that must not depend on files:
// class k lights up a band whose position depends on k, plus noise.
#pragma once

#include <vector>

#include "core/data/dataset.h"
#include "core/util/rng.h"

namespace mt::test_support {

class SyntheticDataset : public Dataset {
 public:
  SyntheticDataset(size_t size, Shape sample, int classes, uint64_t seed)
      : sample_(sample), classes_(classes), labels_(size), pixels_(size * sample.count()) {
    Rng rng(seed);
    const size_t per = sample.count();
    for (size_t i = 0; i < size; ++i) {
      const int label = static_cast<int>(rng.Below(classes));
      labels_[i] = label;
      for (size_t p = 0; p < per; ++p) {
        const bool band = (p * classes / per) == static_cast<size_t>(label);
        pixels_[i * per + p] = (band ? 0.8f : -0.8f) + rng.Uniform(-0.5f, 0.5f);
      }
    }
  }

  size_t Size() const override { return labels_.size(); }
  Shape SampleShape() const override { return sample_; }
  int NumClasses() const override { return classes_; }
  int Label(size_t index) const override { return labels_[index]; }
  int Get(size_t index, float* image) const override {
    const size_t per = sample_.count();
    for (size_t p = 0; p < per; ++p) image[p] = pixels_[index * per + p];
    return labels_[index];
  }

 private:
  Shape sample_;
  int classes_;
  std::vector<int> labels_;
  std::vector<float> pixels_;
};

}  // namespace mt::test_support
