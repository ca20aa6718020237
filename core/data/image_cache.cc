#include "core/data/image_cache.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>

#include "core/data/cache_eviction.h"
#include "core/data/cache_files.h"
#include "core/data/cache_key.h"
#include "core/data/cached_image_dataset.h"
#include "core/data/image_folder.h"
#include "core/data/image_resize.h"

namespace mt {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kFormat = 2;          // changes when the decode, resize or layout does
constexpr size_t kChunkBytes = 8 << 20;  // decoded in parallel before writing
constexpr int kSkippedExamples = 20;     // named one by one; past them, a count
// Cache files kept per folder and split (the newest hold-outs and shapes).
constexpr size_t kVariantsKept = 2;
// How long a process waits for the lock while its holder shows no progress.
constexpr std::chrono::seconds kLockStall{60};

uint64_t Mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  h *= 0xff51afd7ed558ccdull;
  return h ^ (h >> 33);
}
uint64_t Mix(uint64_t h, const std::string& s) {
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return Mix(h, s.size());
}

uint64_t Fingerprint(const ImageFolder& folder, const Shape& input, bool skip_bad) {
  uint64_t h = Mix(kFormat, static_cast<uint64_t>(skip_bad));
  for (int d = 0; d < 3; ++d) h = Mix(h, static_cast<uint64_t>(input[d]));
  for (const std::string& c : folder.classes) h = Mix(h, c);
  for (const ImageFile& f : folder.files) {
    h = Mix(Mix(Mix(h, f.path), f.bytes), static_cast<uint64_t>(f.modified_ns));
    h = Mix(h, static_cast<uint64_t>(f.label));
  }
  return h;
}

std::string Hex(uint64_t v) {
  char s[17];
  std::snprintf(s, sizeof s, "%016llx", static_cast<unsigned long long>(v));
  return s;
}

// Names one folder and split: its cache files (one per hold-out and shape,
// GROUP-VARIANT.mtimg, eviction keeps a few) and its lock (GROUP.lock).
std::string CacheGroup(const ImageFolder& folder, Split split) {
  std::error_code ec;
  const fs::path canonical = fs::weakly_canonical(fs::absolute(folder.root), ec);
  return std::string(split == Split::kTrain ? "train-" : "test-") +
         Hex(Mix(Mix(kFormat, canonical.string()), split == Split::kTrain ? 1 : 2));
}

std::string CacheName(const std::string& group, const ImageFolder& folder, const Shape& input) {
  uint64_t h = Mix(kFormat, static_cast<uint64_t>(folder.test_fraction * 1e9));
  for (int d = 0; d < 3; ++d) h = Mix(h, static_cast<uint64_t>(input[d]));
  return group + "-" + Hex(h) + ".mtimg";
}

// The cache file if it exists, its MAC verifies and it matches, else
// nullptr. The fingerprint covers the shape, but the shape is checked too,
// since buffers are sized from it. Opening renews the file's time, which
// eviction reads as its last use.
std::unique_ptr<CachedImageDataset> OpenIfCurrent(const fs::path& path, uint64_t fingerprint,
                                                  const Shape& input, const std::string& key) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path, ec))) return nullptr;
  try {
    auto data = std::make_unique<CachedImageDataset>(path.string(), key);
    if (data->fingerprint() != fingerprint || data->SampleShape() != input) return nullptr;
    utimensat(AT_FDCWD, path.c_str(), nullptr, AT_SYMLINK_NOFOLLOW);
    return data;
  } catch (const DataError&) {
    // Half written by a crash, from another version or machine, or altered:
    // rebuilt below.
  }
  return nullptr;
}

// Decodes files [begin, end) into `out` (one sample each), several threads
// at a time; a file that fails leaves its error in `errors`.
void DecodeChunk(const ImageFolder& folder, size_t begin, size_t end, const Shape& input,
                 std::vector<uint8_t>& out, std::vector<std::string>& errors) {
  const size_t per = input.count(), n = end - begin;
  const unsigned threads =
      static_cast<unsigned>(std::min<size_t>(n, std::max(1u, std::thread::hardware_concurrency())));
  auto work = [&](unsigned t) {
    AreaResizer resizer(input[2], input[1], input[0]);
    for (size_t i = t; i < n; i += threads) {
      try {
        DecodeImage(folder.files[begin + i].path, input[0], input[2], input[1], resizer);
        resizer.Finish(out.data() + i * per);
      } catch (const std::exception& e) {  // nothing may leave a thread
        errors[i] = e.what();
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work, t);
  work(0);
  for (auto& th : pool) th.join();
}

void Build(const ImageFolder& folder, const Shape& input, const DataOptions& options,
           uint64_t fingerprint, const fs::path& path, const std::string& key, CacheLock& lock) {
  CacheWriter out(path.string(), key);
  out.Write(kImageCacheMagic, 8);
  proto::ImageCache header;
  header.set_fingerprint(fingerprint);
  header.set_channels(input[0]);
  header.set_height(input[1]);
  header.set_width(input[2]);
  for (const std::string& c : folder.classes) header.add_classes(c);
  const size_t per = input.count(), total = folder.files.size();
  const size_t chunk = std::max<size_t>(1, kChunkBytes / per);
  std::vector<uint8_t> pixels(std::min(chunk, total) * per);
  std::vector<std::string> errors;
  for (size_t begin = 0; begin < total; begin += chunk) {
    const size_t end = std::min(total, begin + chunk);
    errors.assign(end - begin, std::string());
    DecodeChunk(folder, begin, end, input, pixels, errors);
    for (size_t i = 0; i < end - begin; ++i) {
      if (!errors[i].empty()) {
        if (!options.skip_bad_images)
          throw DataError(errors[i] + " (or leave bad files out with --skip-bad-images)");
        if (header.skipped() < kSkippedExamples) header.add_skipped_examples(errors[i]);
        header.set_skipped(header.skipped() + 1);
        continue;
      }
      out.Write(pixels.data() + i * per, per);
      header.add_labels(static_cast<uint32_t>(folder.files[begin + i].label));
    }
    lock.Touch();
    if (options.progress) options.progress(end, total);
  }
  if (header.labels_size() == 0)
    throw DataError(folder.root + ": none of its " + std::to_string(total) +
                    " images decodes; the first: " + header.skipped_examples(0));
  const std::string bytes = header.SerializeAsString();
  uint8_t length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<uint8_t>(uint64_t{bytes.size()} >> (8 * i));
  out.Write(bytes.data(), bytes.size());
  out.Write(length, 8);
  out.Commit(std::string(kImageCacheMagic, 8));
}

}  // namespace

std::string ImageCacheDir() {
  if (const char* dir = std::getenv("MT_CACHE_DIR"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return (fs::path(xdg) / "mt").string();
  if (const char* home = std::getenv("HOME"); home && *home)
    return (fs::path(home) / ".cache" / "mt").string();
  std::error_code ec;
  return (fs::temp_directory_path(ec) / "mt-cache").string();
}

std::unique_ptr<Dataset> OpenImageFolder(const std::string& dir, Split split,
                                         const DataOptions& options) {
  const Shape& input = options.input;
  if (input.rank() != 3 || input.count() == 0)
    throw DataError(dir + ": an image folder is read at the model's input size, which is unknown");
  if (input[0] != 1 && input[0] != 3)
    throw DataError(dir + ": the model takes " + std::to_string(input[0]) +
                    " channels; pictures have 1 (grey) or 3 (colour)");
  const ImageFolder folder =
      ListImageFolder(dir, split, options.test_fraction, options.class_names);
  const uint64_t fingerprint = Fingerprint(folder, input, options.skip_bad_images);
  const std::string cache_dir = ImageCacheDir();
  PrepareCacheDir(cache_dir);
  const std::string key = ImageCacheKey(cache_dir);
  const std::string group = CacheGroup(folder, split);
  const fs::path path = fs::path(cache_dir) / CacheName(group, folder, input);
  auto data = OpenIfCurrent(path, fingerprint, input, key);
  if (!data) {
    CacheLock lock((fs::path(cache_dir) / (group + ".lock")).string(), kLockStall);
    // Another process may have built it while this one waited.
    data = OpenIfCurrent(path, fingerprint, input, key);
    if (!data) {
      Build(folder, input, options, fingerprint, path, key, lock);
      EvictCaches(cache_dir, path.string(), group, kVariantsKept, CacheSizeCap());
      data = std::make_unique<CachedImageDataset>(path.string(), key);
    }
  }
  data->set_links_skipped(folder.links_skipped);
  data->set_unsupported(folder.unsupported);
  return data;
}

}  // namespace mt
