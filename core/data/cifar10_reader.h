#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/data/dataset.h"

namespace mt {

// CIFAR-10 binary batches: records of 1 label byte + 3x32x32 pixel bytes (CHW).
std::unique_ptr<Dataset> LoadCifar10(const std::vector<std::string>& files);
// Count and shape from the files' sizes.
DatasetInfo PeekCifar10(const std::vector<std::string>& files);

}  // namespace mt
