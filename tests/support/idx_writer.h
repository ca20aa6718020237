// Writes a small learnable IDX dataset (28x28, 10 classes; class k lights a
// band at row 2k plus noise) so distributed tests run on real files without
// needing the installed Fashion-MNIST.
#pragma once

#include <fstream>
#include <string>
#include <utility>

#include "core/util/rng.h"

namespace mt::test_support {

// `side`: another image size than Fashion-MNIST's, for mismatched splits.
inline void WriteIdxSplit(const std::string& dir, const std::string& prefix, int n, uint64_t seed,
                          int side = 28) {
  auto be32 = [](std::ofstream& f, uint32_t v) {
    const char b[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                       static_cast<char>(v >> 8), static_cast<char>(v)};
    f.write(b, 4);
  };
  std::ofstream images(dir + "/" + prefix + "-images-idx3-ubyte", std::ios::binary);
  std::ofstream labels(dir + "/" + prefix + "-labels-idx1-ubyte", std::ios::binary);
  be32(images, 0x803);
  be32(images, n);
  be32(images, side);
  be32(images, side);
  be32(labels, 0x801);
  be32(labels, n);
  Rng rng(seed);
  std::string img(static_cast<size_t>(side) * side, '\0');
  for (int i = 0; i < n; ++i) {
    const int label = static_cast<int>(rng.Below(10));
    for (int p = 0; p < side * side; ++p) {
      const int row = p / side;
      const bool band = row / 2 == label + 2 || row / 2 == label + 3;
      const int v = (band ? 170 : 40) + static_cast<int>(rng.Below(80));
      img[p] = static_cast<char>(v);
    }
    images.write(img.data(), img.size());
    labels.put(static_cast<char>(label));
  }
}

inline void WriteIdxDataset(const std::string& dir, int train, int test, uint64_t seed) {
  WriteIdxSplit(dir, "train", train, seed);
  WriteIdxSplit(dir, "t10k", test, seed + 1);
}

// The same shape with nothing to learn: noise images, labels drawn apart
// from them. A model trained on it stays at chance.
inline void WriteNoiseIdxDataset(const std::string& dir, int train, int test, uint64_t seed) {
  Rng rng(seed);
  for (const auto& [prefix, n] : {std::pair<std::string, int>{"train", train}, {"t10k", test}}) {
    std::ofstream images(dir + "/" + prefix + "-images-idx3-ubyte", std::ios::binary);
    std::ofstream labels(dir + "/" + prefix + "-labels-idx1-ubyte", std::ios::binary);
    const unsigned char image_header[16] = {
        0, 0,  8, 3, 0, 0, static_cast<unsigned char>(n >> 8), static_cast<unsigned char>(n), 0, 0,
        0, 28, 0, 0, 0, 28};
    const unsigned char label_header[8] = {
        0, 0, 8, 1, 0, 0, static_cast<unsigned char>(n >> 8), static_cast<unsigned char>(n)};
    images.write(reinterpret_cast<const char*>(image_header), sizeof image_header);
    labels.write(reinterpret_cast<const char*>(label_header), sizeof label_header);
    for (int i = 0; i < n; ++i) {
      for (int p = 0; p < 28 * 28; ++p) images.put(static_cast<char>(rng.Below(256)));
      labels.put(static_cast<char>(rng.Below(10)));
    }
  }
}

}  // namespace mt::test_support
