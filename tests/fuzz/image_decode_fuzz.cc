// Fuzzes the PNG and JPEG decoders (core/data/image_decode.h) as an image
// folder's files reach them: the input's first byte picks the channels and
// the size wanted (which sets libjpeg's scaling), the rest is the file. It
// must decode or throw DataError, and never spend on a header's claim what
// the bytes cannot back (-rss_limit_mb and -timeout catch that): the seeds
// include issue 45's bombs.
//
// MT_FUZZ_WRITE_SEEDS=DIR writes the seed corpus and exits.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>

#include "core/data/dataset.h"
#include "core/data/image_decode.h"
#include "core/data/image_resize.h"
#include "tests/support/hostile_images.h"
#include "tests/support/image_writer.h"

namespace {

namespace fs = std::filesystem;
namespace ts = mt::test_support;

fs::path g_file;

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteSeeds(const std::string& dir) {
  fs::create_directories(dir);
  const auto put = [&](const std::string& name, char mode, const std::string& bytes) {
    std::ofstream(dir + "/" + name, std::ios::binary) << std::string(1, mode) + bytes;
  };
  std::vector<uint8_t> pixels(24 * 20 * 3);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(i * 13);
  const fs::path tmp = fs::path(dir) / "tmp.img";
  ts::WritePng(tmp, 24, 20, 3, pixels);
  put("png-rgb", 3, ReadAll(tmp));
  ts::WritePng(tmp, 24, 20, 3, pixels, /*interlaced=*/true);
  put("png-interlaced", 1, ReadAll(tmp));
  ts::WriteJpeg(tmp, 24, 20, 3, pixels);
  put("jpeg-baseline", 3, ReadAll(tmp));
  ts::WriteJpeg(tmp, 24, 20, 3, pixels, 90, /*orientation=*/6);
  put("jpeg-exif", 1, ReadAll(tmp));
  fs::remove(tmp);
  put("jpeg-progressive", 3, ts::JpegBomb(16, 16));
  put("jpeg-bomb", 3, ts::JpegBomb(8000, 8000));
  put("jpeg-padded-bomb", 1, ts::PaddedJpegBomb(400, 400, 4000));
  put("jpeg-many-scans", 1, ts::ManyScanJpeg(16, 16));
  put("png-bomb", 3, ts::PngBomb(8000, 8000));
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* seeds = std::getenv("MT_FUZZ_WRITE_SEEDS")) {
    WriteSeeds(seeds);
    std::exit(0);
  }
  g_file = fs::temp_directory_path() / ("mt-fuzz-image-" + std::to_string(getpid()));
  std::atexit([] {
    std::error_code ec;
    fs::remove(g_file, ec);
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const int channels = data[0] & 2 ? 3 : 1;
  const int side = 8 << ((data[0] >> 2) & 3);  // 8 to 64
  std::ofstream(g_file, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data) + 1, static_cast<std::streamsize>(size - 1));
  mt::AreaResizer resizer(side, side, channels);
  try {
    mt::DecodeImage(g_file.string(), channels, side, side, resizer);
    std::vector<uint8_t> out(static_cast<size_t>(side) * side * channels);
    resizer.Finish(out.data());
  } catch (const mt::DataError&) {
    // Refused with a reason naming the file: the right answer.
  }
  return 0;
}
