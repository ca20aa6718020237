#include "core/data/idx_reader.h"

#include <cstdio>
#include <vector>

#include "core/data/gz_reader.h"

namespace mt {
namespace {

constexpr uint32_t kImagesMagic = 0x00000803;
constexpr uint32_t kLabelsMagic = 0x00000801;
constexpr int kClasses = 10;

uint32_t BigEndian32(GzReader& in, const char* what) {
  uint8_t b[4];
  in.ReadExactly(b, 4, what);
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | b[3];
}

std::string Hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

void ExpectMagic(GzReader& in, uint32_t want, const char* what) {
  const uint32_t magic = BigEndian32(in, "header");
  if (magic != want)
    throw DataError(in.path() + ": bad magic " + Hex(magic) + ", expected " + Hex(want) + " (" +
                    what + ")");
}

void ExpectEnd(GzReader& in) {
  if (!in.AtEnd()) throw DataError(in.path() + ": trailing bytes after the data");
}

struct ImagesHeader {
  uint32_t n, h, w;
};

ImagesHeader ReadImagesHeader(GzReader& images) {
  ExpectMagic(images, kImagesMagic, "IDX images");
  const uint32_t n = BigEndian32(images, "header");
  const uint32_t h = BigEndian32(images, "header");
  const uint32_t w = BigEndian32(images, "header");
  // At most 16 GiB of pixels: the sizes below are then safe to multiply.
  if (n == 0 || h == 0 || w == 0 || h > 4096 || w > 4096 || n > (1u << 28) ||
      uint64_t{n} * h * w > (uint64_t{1} << 34))
    throw DataError(images.path() + ": implausible dimensions " + std::to_string(n) + "x" +
                    std::to_string(h) + "x" + std::to_string(w));
  return {n, h, w};
}

}  // namespace

DatasetInfo PeekIdx(const std::string& images_path) {
  GzReader images(images_path);
  const ImagesHeader hd = ReadImagesHeader(images);
  DatasetInfo info;
  info.size = hd.n;
  info.sample = Shape{1, static_cast<int>(hd.h), static_cast<int>(hd.w)};
  info.classes = kClasses;
  return info;
}

std::unique_ptr<Dataset> LoadIdx(const std::string& images_path, const std::string& labels_path) {
  GzReader images(images_path);
  const auto [n, h, w] = ReadImagesHeader(images);

  GzReader labels_in(labels_path);
  ExpectMagic(labels_in, kLabelsMagic, "IDX labels");
  const uint32_t label_count = BigEndian32(labels_in, "header");
  if (label_count != n)
    throw DataError(labels_path + ": label count " + std::to_string(label_count) +
                    " does not match image count " + std::to_string(n) + " in " + images_path);

  // The headers are only claims until the bytes arrive.
  std::vector<uint8_t> labels;
  labels_in.ReadGrowing(&labels, n, "labels");
  ExpectEnd(labels_in);
  for (uint32_t i = 0; i < n; ++i)
    if (labels[i] >= kClasses)
      throw DataError(labels_path + ": label " + std::to_string(labels[i]) + " at index " +
                      std::to_string(i) + " is not a class in [0, 9]");

  std::vector<uint8_t> pixels;
  images.ReadGrowing(&pixels, static_cast<size_t>(n) * h * w, "pixels");
  ExpectEnd(images);
  return std::make_unique<InMemoryDataset>(Shape{1, static_cast<int>(h), static_cast<int>(w)},
                                           kClasses, std::move(pixels), std::move(labels));
}

}  // namespace mt
