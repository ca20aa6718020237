// The image cache's files on disk, written as if others could reach the
// directory: it is made private (0700, this user's), new files are created
// under unpredictable names with O_EXCL|O_NOFOLLOW, so a planted link is
// never written through, and the lock that lets one process build while
// the others wait gives up, naming itself, when its holder makes no
// progress.
#pragma once

#include <chrono>
#include <string>

#include "core/data/cache_key.h"

namespace mt {

// Creates `dir` (and its parents) if needed and makes it 0700. Throws
// DataError when it is not a directory of this user (a link planted by
// someone else, or another user's directory: set MT_CACHE_DIR).
void PrepareCacheDir(const std::string& dir);

// A new file beside `final_path`, named final_path.tmp-RANDOM, mode 0600;
// everything written goes into an HMAC too. Removed unless committed.
class CacheWriter {
 public:
  CacheWriter(const std::string& final_path, const std::string& key);
  ~CacheWriter();
  CacheWriter(const CacheWriter&) = delete;
  CacheWriter& operator=(const CacheWriter&) = delete;

  void Write(const void* data, size_t n);
  // Appends the MAC of everything written, then `trailer` (outside the
  // MAC), syncs, and renames the file over the final path.
  void Commit(const std::string& trailer);
  const std::string& temp_path() const { return temp_; }

 private:
  void WriteRaw(const void* data, size_t n);
  std::string final_, temp_;
  int fd_ = -1;
  CacheMac mac_;
  bool committed_ = false;
};

// An exclusive lock on `path` (created 0600 if needed). While another
// process holds it, waits as long as the holder shows progress (Touch
// moves the file's time); after `stall` without any, throws DataError
// naming the file, so a lock taken and never released (a stuck process,
// or anyone holding the file open) costs a clear message, not a hang.
class CacheLock {
 public:
  CacheLock(const std::string& path, std::chrono::seconds stall);
  ~CacheLock();
  CacheLock(const CacheLock&) = delete;
  CacheLock& operator=(const CacheLock&) = delete;
  void Touch();  // "still working", for the processes waiting

 private:
  int fd_ = -1;
};

}  // namespace mt
