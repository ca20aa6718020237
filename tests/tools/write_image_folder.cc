// mt_write_image_folder: writes an IDX or CIFAR-10 dataset as an image
// folder (OUT/train/<label>/<index>.png|jpg, OUT/test/...) for the
// image-folder tests and tests/bench/image_folder.py, and optionally the
// same samples as IDX or CIFAR-10 files in the folder's own order (class by
// class, by index), so training on either sees identical data in identical
// order.
//   mt_write_image_folder DATASET OUT [--format png|jpeg] [--quality Q]
//                         [--train N] [--test N] [--same-order DIR]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "core/data/dataset.h"
#include "tests/support/image_writer.h"

namespace {

namespace fs = std::filesystem;

struct Args {
  std::string dataset, out, format = "png", same_order;
  int quality = 95;
  size_t train = 0, test = 0;  // 0: all
};

void Be32(std::ofstream& f, uint32_t v) {
  const char b[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                     static_cast<char>(v >> 8), static_cast<char>(v)};
  f.write(b, 4);
}

// Writes one split as a folder and, with --same-order, as IDX (grey) or
// CIFAR-10 (colour) files holding its samples class by class, by index.
void WriteSplit(const mt::Dataset& d, size_t limit, const fs::path& dir, const Args& a,
                const std::string& idx_prefix, const std::string& cifar_file) {
  const mt::Shape s = d.SampleShape();
  const int c = s[0], h = s[1], w = s[2];
  const size_t n = limit > 0 ? std::min(limit, d.Size()) : d.Size();
  std::vector<float> f(s.count());
  std::vector<std::vector<std::pair<size_t, std::vector<uint8_t>>>> by_class(
      static_cast<size_t>(d.NumClasses()));
  for (size_t i = 0; i < n; ++i) {
    const int label = d.Get(i, f.data());
    std::vector<uint8_t> planar(f.size());
    for (size_t k = 0; k < f.size(); ++k)
      planar[k] = static_cast<uint8_t>(std::lround((f[k] - mt::kPixelOffset) / mt::kPixelScale));
    std::vector<uint8_t> interleaved(f.size());
    for (int ch = 0; ch < c; ++ch)
      for (int p = 0; p < h * w; ++p)
        interleaved[static_cast<size_t>(p) * c + ch] = planar[static_cast<size_t>(ch) * h * w + p];
    const fs::path cls = dir / std::to_string(label);
    fs::create_directories(cls);
    char name[32];
    std::snprintf(name, sizeof name, "%06zu.%s", i, a.format == "png" ? "png" : "jpg");
    if (a.format == "png")
      mt::test_support::WritePng(cls / name, w, h, c, interleaved);
    else
      mt::test_support::WriteJpeg(cls / name, w, h, c, interleaved, a.quality);
    by_class[static_cast<size_t>(label)].push_back({i, std::move(planar)});
  }
  if (a.same_order.empty()) return;
  fs::create_directories(a.same_order);
  if (c == 1) {
    std::ofstream images(fs::path(a.same_order) / (idx_prefix + "-images-idx3-ubyte"),
                         std::ios::binary);
    std::ofstream labels(fs::path(a.same_order) / (idx_prefix + "-labels-idx1-ubyte"),
                         std::ios::binary);
    Be32(images, 0x803), Be32(images, static_cast<uint32_t>(n)), Be32(images, h), Be32(images, w);
    Be32(labels, 0x801), Be32(labels, static_cast<uint32_t>(n));
    for (size_t label = 0; label < by_class.size(); ++label)
      for (const auto& [index, pixels] : by_class[label]) {
        images.write(reinterpret_cast<const char*>(pixels.data()),
                     static_cast<std::streamsize>(pixels.size()));
        labels.put(static_cast<char>(label));
      }
  } else {
    std::ofstream out(fs::path(a.same_order) / cifar_file, std::ios::binary);
    for (size_t label = 0; label < by_class.size(); ++label)
      for (const auto& [index, pixels] : by_class[label]) {
        out.put(static_cast<char>(label));
        out.write(reinterpret_cast<const char*>(pixels.data()),
                  static_cast<std::streamsize>(pixels.size()));
      }
  }
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << arg << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--format")
      a.format = value();
    else if (arg == "--quality")
      a.quality = std::atoi(value().c_str());
    else if (arg == "--train")
      a.train = std::strtoull(value().c_str(), nullptr, 10);
    else if (arg == "--test")
      a.test = std::strtoull(value().c_str(), nullptr, 10);
    else if (arg == "--same-order")
      a.same_order = value();
    else
      positional.push_back(arg);
  }
  if (positional.size() != 2 || (a.format != "png" && a.format != "jpeg")) {
    std::cerr << "usage: mt_write_image_folder DATASET OUT [--format png|jpeg] [--quality Q] "
                 "[--train N] [--test N] [--same-order DIR]\n";
    return 2;
  }
  a.dataset = positional[0];
  a.out = positional[1];
  try {
    const auto train = mt::LoadDataset(a.dataset, mt::Split::kTrain);
    const auto test = mt::LoadDataset(a.dataset, mt::Split::kTest);
    WriteSplit(*train, a.train, fs::path(a.out) / "train", a, "train", "data_batch_1.bin");
    WriteSplit(*test, a.test, fs::path(a.out) / "test", a, "t10k", "test_batch.bin");
  } catch (const std::exception& e) {
    std::cerr << "mt_write_image_folder: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
