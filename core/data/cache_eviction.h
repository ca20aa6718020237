// Keeps the image cache directory bounded. Each folder, split, hold-out
// and input shape is its own cache file, and a hub picks the hold-out and
// the shape: one that names a new test fraction on every Join would
// otherwise leave a new file each time until the worker's disk is full.
#pragma once

#include <cstdint>
#include <string>

namespace mt {

// The most the cache directory may hold: $MT_CACHE_MAX_MB megabytes, else
// 4096 MB.
uint64_t CacheSizeCap();

// In `dir`: removes temporaries an hour old (left by a crash); of the cache
// files whose names start with `group` (one folder and split), all but the
// `variants` most recently used; then the least recently used cache files
// until the rest hold at most `max_bytes`. Never removes `keep` (the file
// just built or opened). Recency is the file's modification time, which
// opening a cache renews. Returns how many files it removed.
size_t EvictCaches(const std::string& dir, const std::string& keep, const std::string& group,
                   size_t variants, uint64_t max_bytes);

}  // namespace mt
