#include "core/data/cifar10_reader.h"

#include <filesystem>

#include "core/data/gz_reader.h"

namespace mt {
namespace {

constexpr size_t kPixels = 3 * 32 * 32;
constexpr size_t kRecord = 1 + kPixels;
constexpr int kClasses = 10;

size_t CountRecords(const std::vector<std::string>& files) {
  size_t total = 0;
  for (const auto& f : files) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(f, ec);
    if (ec) throw DataError(f + ": cannot read: " + ec.message());
    if (size == 0 || size % kRecord != 0)
      throw DataError(f + ": size " + std::to_string(size) +
                      " is not a whole number of 3073-byte CIFAR-10 records");
    total += size / kRecord;
  }
  return total;
}

}  // namespace

DatasetInfo PeekCifar10(const std::vector<std::string>& files) {
  DatasetInfo info;
  info.size = CountRecords(files);
  info.sample = Shape{3, 32, 32};
  info.classes = kClasses;
  return info;
}

std::unique_ptr<Dataset> LoadCifar10(const std::vector<std::string>& files) {
  const size_t total = CountRecords(files);
  std::vector<uint8_t> pixels(total * kPixels), labels(total);
  size_t at = 0;
  for (const auto& f : files) {
    GzReader in(f);
    const size_t records = std::filesystem::file_size(f) / kRecord;
    for (size_t r = 0; r < records; ++r, ++at) {
      in.ReadExactly(&labels[at], 1, "label");
      if (labels[at] >= kClasses)
        throw DataError(f + ": label " + std::to_string(labels[at]) + " in record " +
                        std::to_string(r) + " is not a class in [0, 9]");
      in.ReadExactly(&pixels[at * kPixels], kPixels, "pixels");
    }
  }
  return std::make_unique<InMemoryDataset>(Shape{3, 32, 32}, kClasses, std::move(pixels),
                                           std::move(labels));
}

}  // namespace mt
