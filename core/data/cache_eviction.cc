#include "core/data/cache_eviction.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <vector>

namespace mt {
namespace {

namespace fs = std::filesystem;

constexpr auto kTempAge = std::chrono::hours(1);
constexpr uint64_t kDefaultCapMb = 4096;

struct Entry {
  fs::path path;
  uint64_t bytes = 0;
  fs::file_time_type used;
};

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace

uint64_t CacheSizeCap() {
  if (const char* mb = std::getenv("MT_CACHE_MAX_MB"); mb && *mb) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(mb, &end, 10);
    if (end && *end == '\0' && v < (uint64_t{1} << 40)) return v << 20;
  }
  return kDefaultCapMb << 20;
}

size_t EvictCaches(const std::string& dir, const std::string& keep, const std::string& group,
                   size_t variants, uint64_t max_bytes) {
  std::error_code ec;
  const auto now = fs::file_time_type::clock::now();
  std::vector<Entry> caches;
  size_t removed = 0;
  const auto remove = [&](const fs::path& p) {
    std::error_code rc;
    if (fs::remove(p, rc)) ++removed;
  };
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::error_code sc;
    if (e.symlink_status(sc).type() != fs::file_type::regular) continue;
    const std::string name = e.path().filename().string();
    const auto used = e.last_write_time(sc);
    if (sc) continue;
    if (name.find(".mtimg.tmp-") != std::string::npos) {
      if (now - used > kTempAge) remove(e.path());
      continue;
    }
    if (e.path().extension() != ".mtimg" || e.path() == fs::path(keep)) continue;
    caches.push_back({e.path(), e.file_size(sc), used});
  }
  // Newest first: the oldest go first.
  std::sort(caches.begin(), caches.end(),
            [](const Entry& a, const Entry& b) { return a.used > b.used; });
  size_t same_group = 1;  // `keep` is one of them
  std::vector<Entry> kept;
  for (Entry& e : caches) {
    if (StartsWith(e.path.filename().string(), group) && ++same_group > variants) {
      remove(e.path);
      continue;
    }
    kept.push_back(std::move(e));
  }
  uint64_t total = fs::file_size(keep, ec);
  if (ec) total = 0;
  for (const Entry& e : kept) total += e.bytes;
  while (total > max_bytes && !kept.empty()) {
    total -= kept.back().bytes;
    remove(kept.back().path);
    kept.pop_back();
  }
  return removed;
}

}  // namespace mt
