// The image cache is untrusted input: anyone who can write the cache
// directory could relabel every sample and keep the fingerprint. Each cache
// file therefore ends in an HMAC-SHA256 of everything before it, under a key
// that never leaves this machine (STATE_DIR/image-cache.key, 0600); a file
// whose MAC does not verify is stale and rebuilt.
#pragma once

#include <cstddef>
#include <string>

namespace mt {

constexpr size_t kCacheKeyBytes = 32;
constexpr size_t kCacheMacBytes = 32;

// The key in the state directory (DefaultStateDir(); where there is none,
// as on Android, `fallback_dir`: the private cache directory), made on
// first use: 32 random bytes, written with O_EXCL|O_NOFOLLOW, mode 0600.
// Throws DataError naming the file when it cannot be made, or is not a
// 32-byte regular file of this user that no one else can read.
std::string ImageCacheKey(const std::string& fallback_dir);

// HMAC-SHA256, fed in pieces.
class CacheMac {
 public:
  explicit CacheMac(const std::string& key);
  ~CacheMac();
  CacheMac(const CacheMac&) = delete;
  CacheMac& operator=(const CacheMac&) = delete;
  void Update(const void* data, size_t n);
  std::string Final();  // kCacheMacBytes bytes; once

 private:
  struct State;
  State* state_;
};

}  // namespace mt
