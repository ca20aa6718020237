// Fuzzes the image cache reader (core/data/cached_image_dataset.h) past
// its MAC: the input is a cache file less its MAC and closing magic, which
// are appended here under a fixed key, so the fuzzer explores the header
// and the sizes it claims rather than the MAC. It must open and read every
// sample, or throw DataError: nothing else.
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
#include <vector>

#include "core/data/cache_key.h"
#include "core/data/cached_image_dataset.h"
#include "core/data/dataset.h"
#include "tests/support/image_writer.h"

namespace {

namespace fs = std::filesystem;

const std::string kKey(mt::kCacheKeyBytes, 'k');
fs::path g_file;

// Real caches, built by the library from small folders.
void WriteSeeds(const std::string& dir) {
  fs::create_directories(dir);
  const fs::path work = fs::temp_directory_path() / ("mt-cache-seeds-" + std::to_string(getpid()));
  setenv("MT_STATE_DIR", (work / "state").c_str(), 1);
  setenv("MT_CACHE_DIR", (work / "cache").c_str(), 1);
  for (const bool bad : {false, true}) {
    const fs::path data = work / (bad ? "bad" : "good");
    for (int i = 0; i < 3; ++i) {
      fs::create_directories(data / (i ? "caf\xe9" : "b"));
      mt::test_support::WritePng(data / (i ? "caf\xe9" : "b") / (std::to_string(i) + ".png"), 8, 8,
                                 3, std::vector<uint8_t>(192, static_cast<uint8_t>(60 * i)));
    }
    if (bad) std::ofstream(data / "b" / "bad.png") << "not a picture";
    mt::DataOptions o;
    o.input = mt::Shape{3, 4, 4};
    o.test_fraction = 0;
    o.skip_bad_images = bad;
    mt::LoadDataset(data.string(), mt::Split::kTrain, o);
  }
  int n = 0;
  for (const auto& e : fs::directory_iterator(work / "cache")) {
    if (e.path().extension() != ".mtimg") continue;
    std::ifstream in(e.path(), std::ios::binary);
    const std::string bytes(std::istreambuf_iterator<char>(in), {});
    std::ofstream(dir + "/cache" + std::to_string(n++), std::ios::binary)
        << bytes.substr(0, bytes.size() - mt::kCacheMacBytes - 8);
  }
  std::error_code ec;
  fs::remove_all(work, ec);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* seeds = std::getenv("MT_FUZZ_WRITE_SEEDS")) {
    WriteSeeds(seeds);
    std::exit(0);
  }
  g_file = fs::temp_directory_path() / ("mt-fuzz-cache-" + std::to_string(getpid()));
  std::atexit([] {
    std::error_code ec;
    fs::remove(g_file, ec);
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mt::CacheMac mac(kKey);
  mac.Update(data, size);
  std::string file(reinterpret_cast<const char*>(data), size);
  file += mac.Final();
  file += std::string(mt::kImageCacheMagic, 8);
  std::ofstream(g_file, std::ios::binary | std::ios::trunc) << file;
  try {
    const mt::CachedImageDataset cache(g_file.string(), kKey);
    std::vector<float> image(cache.Size() > 0 ? cache.SampleShape().count() : 0);
    for (size_t i = 0; i < cache.Size(); ++i) {
      if (cache.Label(i) >= cache.NumClasses()) std::abort();
      cache.Get(i, image.data());
    }
  } catch (const mt::DataError&) {
    // Refused with a reason naming the file: the right answer.
  }
  return 0;
}
