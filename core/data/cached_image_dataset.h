// The Dataset over an image cache file (image_cache.h): labels in memory,
// pixels read with pread as batches ask for them.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/data/dataset.h"
#include "train_state.pb.h"

namespace mt {

class CachedImageDataset : public Dataset {
 public:
  // Opens a cache file; throws DataError if it is not a whole, valid one
  // whose MAC verifies under `key` (cache_key.h).
  CachedImageDataset(const std::string& path, const std::string& key);
  ~CachedImageDataset() override;
  CachedImageDataset(const CachedImageDataset&) = delete;
  CachedImageDataset& operator=(const CachedImageDataset&) = delete;

  size_t Size() const override { return labels_.size(); }
  Shape SampleShape() const override { return sample_; }
  int NumClasses() const override { return static_cast<int>(classes_.size()); }
  int Label(size_t index) const override { return labels_[index]; }
  int Get(size_t index, float* image) const override;
  const std::vector<std::string>& ClassNames() const override { return classes_; }
  size_t HeldBytes() const override { return labels_.size() * sizeof(uint16_t); }
  bool IsImageFolder() const override { return true; }

  uint64_t fingerprint() const { return fingerprint_; }
  uint64_t skipped() const { return skipped_; }
  const std::vector<std::string>& skipped_examples() const { return skipped_examples_; }
  // Symbolic links the folder's listing skipped (image_folder.h), for
  // the caller to say; not kept in the file, since links change nothing
  // that was cached.
  uint64_t links_skipped() const { return links_skipped_; }
  void set_links_skipped(uint64_t n) { links_skipped_ = n; }
  // Files the listing left out by their name (ImageFolder::unsupported),
  // likewise for the caller to say.
  const std::map<std::string, size_t>& unsupported() const { return unsupported_; }
  void set_unsupported(std::map<std::string, size_t> u) { unsupported_ = std::move(u); }

 private:
  std::string path_;
  int fd_ = -1;
  Shape sample_;
  size_t per_sample_ = 0;
  uint64_t fingerprint_ = 0, skipped_ = 0, links_skipped_ = 0;
  std::vector<std::string> classes_, skipped_examples_;
  std::vector<uint16_t> labels_;
  std::map<std::string, size_t> unsupported_;
};

// The 8 bytes that open and close a cache file.
extern const char kImageCacheMagic[8];

}  // namespace mt
