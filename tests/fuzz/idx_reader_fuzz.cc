// Fuzzes the IDX dataset reader (core/data/idx_reader.h) on files whose
// headers and sizes lie: the input's first byte picks gzip or raw, the next
// two where it splits into the images file and the labels file. It must load
// or throw DataError, and never allocate what a header claims before the
// bytes are there (-rss_limit_mb catches that).
//
// MT_FUZZ_WRITE_SEEDS=DIR writes the seed corpus and exits.
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include "core/data/dataset.h"
#include "core/data/idx_reader.h"

namespace {

namespace fs = std::filesystem;

fs::path g_dir;

void Put(const fs::path& path, const std::string& bytes, bool gzip) {
  if (!gzip) {
    std::ofstream(path, std::ios::binary) << bytes;
    return;
  }
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
  gzclose(f);
}

std::string Be32(uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}

void WriteSeeds(const std::string& dir) {
  fs::create_directories(dir);
  const uint32_t n = 3;
  const std::string images = Be32(0x803) + Be32(n) + Be32(4) + Be32(4) + std::string(n * 16, 9);
  const std::string labels = Be32(0x801) + Be32(n) + std::string{0, 1, 2};
  for (const char flag : {0, 1}) {
    std::string seed(1, flag);
    seed += static_cast<char>(images.size() & 0xFF);
    seed += static_cast<char>(images.size() >> 8);
    std::ofstream(dir + (flag ? "/gzip" : "/raw"), std::ios::binary) << seed + images + labels;
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* seeds = std::getenv("MT_FUZZ_WRITE_SEEDS")) {
    WriteSeeds(seeds);
    std::exit(0);
  }
  g_dir = fs::temp_directory_path() / ("mt-fuzz-idx-" + std::to_string(getpid()));
  fs::create_directories(g_dir);
  std::atexit([] {
    std::error_code ec;
    fs::remove_all(g_dir, ec);
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  const bool gzip = data[0] & 1;
  const size_t split = std::min<size_t>(data[1] | (size_t{data[2]} << 8), size - 3);
  const std::string rest(reinterpret_cast<const char*>(data) + 3, size - 3);
  const fs::path images = g_dir / "images", labels = g_dir / "labels";
  Put(images, rest.substr(0, split), gzip);
  Put(labels, rest.substr(split), gzip);
  try {
    mt::LoadIdx(images.string(), labels.string());
  } catch (const mt::DataError&) {
    // Refused with a reason naming the file: the right answer.
  }
  return 0;
}
