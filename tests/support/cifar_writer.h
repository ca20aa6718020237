// Writes a small learnable dataset in CIFAR-10's binary format (records of
// 1 label byte + 3x32x32 pixel bytes, CHW) so that end-to-end tests train
// 3x32x32 models on real files without the installed CIFAR-10. Class k
// lights a band of rows in channel k % 3, plus noise.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include "core/util/rng.h"

namespace mt::test_support {

inline void WriteCifarBatch(const std::filesystem::path& file, int n, uint64_t seed) {
  std::ofstream out(file, std::ios::binary);
  Rng rng(seed);
  std::string record(1 + 3 * 32 * 32, '\0');
  for (int i = 0; i < n; ++i) {
    const int label = static_cast<int>(rng.Below(10));
    record[0] = static_cast<char>(label);
    for (int c = 0; c < 3; ++c)
      for (int p = 0; p < 32 * 32; ++p) {
        const int row = p / 32;
        const bool band = c == label % 3 && row / 3 == label;
        const int v = (band ? 170 : 40) + static_cast<int>(rng.Below(80));
        record[1 + c * 32 * 32 + p] = static_cast<char>(v);
      }
    out.write(record.data(), static_cast<std::streamsize>(record.size()));
  }
}

// dir/data_batch_1.bin with `train` records and dir/test_batch.bin with
// `test` (the loader takes whichever of data_batch_1..5.bin exist).
inline void WriteCifarDataset(const std::filesystem::path& dir, int train, int test,
                              uint64_t seed) {
  std::filesystem::create_directories(dir);
  WriteCifarBatch(dir / "data_batch_1.bin", train, seed);
  WriteCifarBatch(dir / "test_batch.bin", test, seed + 1);
}

}  // namespace mt::test_support
