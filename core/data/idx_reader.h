#pragma once

#include <memory>
#include <string>

#include "core/data/dataset.h"

namespace mt {

// MNIST-style IDX files (images: magic 0x00000803, N x H x W uint8; labels:
// magic 0x00000801, N uint8), raw or gzip.
std::unique_ptr<Dataset> LoadIdx(const std::string& images_path, const std::string& labels_path);
// Count and shape from the images file's header.
DatasetInfo PeekIdx(const std::string& images_path);

}  // namespace mt
