// Datasets as the trainer sees them: a sized, indexable set of labelled
// samples. Images stay uint8 in memory (a quarter of the float size) and are
// normalised when a batch is filled.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/tensor/shape.h"

namespace mt {

// Bad or missing data; the message always names the file or directory.
struct DataError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual size_t Size() const = 0;
  virtual Shape SampleShape() const = 0;  // C, H, W
  virtual int NumClasses() const = 0;
  virtual int Label(size_t index) const = 0;
  // Writes sample `index`, normalised to float, into `image`
  // (SampleShape().count() floats) and returns its label.
  virtual int Get(size_t index, float* image) const = 0;
};

// Every device must compute identical inputs from identical bytes, so the
// normalisation is fixed, not estimated from local data: [0, 255] -> [-1, 1].
constexpr float kPixelScale = 2.0f / 255.0f;
constexpr float kPixelOffset = -1.0f;

class InMemoryDataset : public Dataset {
 public:
  InMemoryDataset(Shape sample, int classes, std::vector<uint8_t> pixels,
                  std::vector<uint8_t> labels);

  size_t Size() const override { return labels_.size(); }
  Shape SampleShape() const override { return sample_; }
  int NumClasses() const override { return classes_; }
  int Label(size_t index) const override { return labels_[index]; }
  int Get(size_t index, float* image) const override;

 private:
  Shape sample_;
  int classes_;
  size_t per_sample_;
  std::vector<uint8_t> pixels_;
  std::vector<uint8_t> labels_;
};

enum class Split { kTrain, kTest };

// A known name (fashion-mnist, mnist, cifar10) under /usr/share/datasets, or
// a directory holding IDX or CIFAR-10 binary files.
std::unique_ptr<Dataset> LoadDataset(const std::string& name_or_dir, Split split);

// Whether `name` is one of the names LoadDataset knows (not a path).
bool IsKnownDatasetName(const std::string& name);
// "fashion-mnist, mnist, ...", for messages.
std::string KnownDatasetNames();

// What a split holds, read from headers and file sizes only: for the hub,
// which needs the training set's size but never its samples.
struct DatasetInfo {
  size_t size = 0;
  Shape sample;
};
DatasetInfo PeekDataset(const std::string& name_or_dir, Split split);

// Writes n samples (NCHW floats) and their labels; allocates nothing.
void FillBatch(const Dataset& data, const uint32_t* indices, int n, float* images, int32_t* labels);

}  // namespace mt
