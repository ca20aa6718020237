// Datasets as the trainer sees them: a sized, indexable set of labelled
// samples. Images stay uint8 in memory (a quarter of the float size) and are
// normalised when a batch is filled.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
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

// Every device must compute identical inputs from identical bytes, so the
// normalisation is fixed by the model, not estimated from local data: by
// default [0, 255] -> [-1, 1].
constexpr float kPixelScale = 2.0f / 255.0f;
constexpr float kPixelOffset = -1.0f;

// input = pixel * scale[c] + offset[c] in channel c (models take at most 3).
struct PixelScaling {
  float scale[3] = {kPixelScale, kPixelScale, kPixelScale};
  float offset[3] = {kPixelOffset, kPixelOffset, kPixelOffset};
  // From the mean and std of images in [0, 1], as torchvision's Normalize
  // takes them: one value for every channel, or one per channel. Throws
  // std::invalid_argument for another count or a std that is not positive.
  static PixelScaling FromMeanStd(const std::vector<float>& mean, const std::vector<float>& std,
                                  int channels);
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
  // Folder names of the classes (image folders); empty when the files do
  // not name them.
  virtual const std::vector<std::string>& ClassNames() const {
    static const std::vector<std::string> kNone;
    return kNone;
  }
  // What the set keeps in memory; a set read from disk as needed keeps
  // only its labels.
  virtual size_t HeldBytes() const { return Size() * (SampleShape().count() + 1); }
  // Photos from an image folder, which augmentation suits by default.
  virtual bool IsImageFolder() const { return false; }

  // How Get turns pixels into inputs (the model's, DataOptions::scaling).
  void set_scaling(const PixelScaling& s) { scaling_ = s; }
  const PixelScaling& scaling() const { return scaling_; }

 protected:
  PixelScaling scaling_;
};

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

// How a dataset is read beyond its name; only image folders need any of it.
struct DataOptions {
  // The model's input (channels, height, width): an image folder's pictures
  // are converted and resized to it. IDX and CIFAR-10 files have their own,
  // and a split whose samples have another shape is refused when it is
  // opened, before any buffer is sized from it (empty: not checked).
  Shape input;
  // The model's outputs: a split with more classes is refused when it is
  // opened (0: not checked).
  int classes = 0;
  // Image folders without a test folder: the share of each class held out
  // for testing; below 0, image_folder.h's default.
  double test_fraction = -1;
  // Leave out files that do not decode, counting them, rather than stop.
  bool skip_bad_images = false;
  // Called now and then while an image folder is decoded the first time.
  std::function<void(size_t done, size_t total)> progress;
  // How pixels become the model's inputs (SpecPixelScaling).
  PixelScaling scaling;
  // The model's classes, when it names them (ModelSpec.class_names): an
  // image folder's class folders are labelled by their place in this list.
  std::vector<std::string> class_names;
};

// A known name (fashion-mnist, mnist, cifar10) under /usr/share/datasets, or
// a directory holding IDX or CIFAR-10 binary files or class folders of PNG
// and JPEG images (core/data/image_folder.h). Every split is checked against
// options.input and options.classes (DataError naming the split), so a test
// split that differs from the training split never reaches a model.
std::unique_ptr<Dataset> LoadDataset(const std::string& name_or_dir, Split split,
                                     const DataOptions& options = {});

// Whether `name` is one of the names LoadDataset knows (not a path).
bool IsKnownDatasetName(const std::string& name);
// "fashion-mnist, mnist, ...", for messages.
std::string KnownDatasetNames();

// What a split holds, read from headers and file sizes only: for the hub,
// which needs the training set's size but never its samples.
// An image folder is decoded (and cached) to know which files are good.
struct DatasetInfo {
  size_t size = 0;
  Shape sample;
  int classes = 0;
  std::vector<std::string> class_names;  // image folders only
  bool image_folder = false;
  // Image folders with DataOptions::skip_bad_images: files left out, and
  // the first few with why.
  uint64_t skipped = 0;
  std::vector<std::string> skipped_examples;
  // Image folders: symbolic links below the folder, not followed; files
  // of formats mt does not read, by extension (ImageFolder::unsupported).
  uint64_t links_skipped = 0;
  std::map<std::string, size_t> unsupported;
};
DatasetInfo PeekDataset(const std::string& name_or_dir, Split split,
                        const DataOptions& options = {});

// Every sample's label, in order (the labels a partition is drawn from).
std::vector<uint16_t> DatasetLabels(const Dataset& data);

// Writes n samples (NCHW floats) and their labels; allocates nothing.
void FillBatch(const Dataset& data, const uint32_t* indices, int n, float* images, int32_t* labels);

}  // namespace mt
