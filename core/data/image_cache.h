// An image folder's split, decoded once into a compact uint8 file and read
// from it sample by sample: later epochs and runs decode nothing, and a
// phone with 100k photos holds their labels in memory, not their pixels.
//
// The cache lives in $MT_CACHE_DIR, else $XDG_CACHE_HOME/mt, else
// ~/.cache/mt, else the temporary directory's mt-cache, kept 0700. It is
// rebuilt when a file is added, removed or changed, when the model's input
// differs, or when its MAC (cache_key.h) does not verify: a cache is
// untrusted input. Processes on one machine (a hub and its local workers)
// build it once: the others wait for the first (cache_files.h). Old
// hold-outs and shapes and a total beyond the cap are evicted
// (cache_eviction.h).
#pragma once

#include <memory>
#include <string>

#include "core/data/dataset.h"

namespace mt {

std::string ImageCacheDir();

// A CachedImageDataset (cached_image_dataset.h). Throws DataError naming
// the bad file (unless options.skip_bad_images), the folder, or the cache
// that cannot be written.
std::unique_ptr<Dataset> OpenImageFolder(const std::string& dir, Split split,
                                         const DataOptions& options);

}  // namespace mt
