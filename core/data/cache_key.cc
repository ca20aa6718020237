#include "core/data/cache_key.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/data/dataset.h"
#include "core/util/state_dir.h"

namespace mt {
namespace {

namespace fs = std::filesystem;

std::string Errno() { return std::strerror(errno); }

bool WriteAll(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t wrote = write(fd, p, n);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) return false;
    p += wrote;
    n -= static_cast<size_t>(wrote);
  }
  return true;
}

// The key if `path` holds one, "" if there is no file; throws when there is
// a file that is not a private key of this user.
std::string ReadKey(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) return "";
  const std::string fix = " (a 32-byte file of yours, mode 0600; delete it to make another)";
  if (fd < 0) throw DataError(path + ": cannot open the image cache key: " + Errno() + fix);
  struct stat st {};
  std::string key(kCacheKeyBytes, '\0');
  const bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
                  (st.st_mode & 077) == 0 && st.st_size == static_cast<off_t>(kCacheKeyBytes) &&
                  pread(fd, key.data(), kCacheKeyBytes, 0) == static_cast<ssize_t>(kCacheKeyBytes);
  close(fd);
  if (!ok) throw DataError(path + ": not a usable image cache key" + fix);
  return key;
}

}  // namespace

std::string ImageCacheKey(const std::string& fallback_dir) {
  std::string dir;
  try {
    dir = DefaultStateDir();
  } catch (const std::runtime_error&) {
    dir = fallback_dir;
  }
  const std::string path = dir + "/image-cache.key";
  if (std::string key = ReadKey(path); !key.empty()) return key;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    fs::create_directories(fs::path(dir).parent_path(), ec);
    if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
      throw DataError(dir + ": cannot create the state directory: " + Errno());
  }
  std::string key(kCacheKeyBytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(key.data()), kCacheKeyBytes) != 1)
    throw DataError(path + ": no random bytes for a new image cache key");
  // Written whole under a private name, then linked into place: link fails
  // when another process made the key first, and that one is used.
  std::string tmp(kCacheKeyBytes / 2, '\0');
  RAND_bytes(reinterpret_cast<unsigned char*>(tmp.data()), static_cast<int>(tmp.size()));
  static const char kHex[] = "0123456789abcdef";
  std::string name = path + ".tmp-";
  for (unsigned char c : tmp) name += std::string{kHex[c >> 4], kHex[c & 15]};
  const int fd = open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) throw DataError(name + ": cannot create the image cache key: " + Errno());
  const bool written = WriteAll(fd, key.data(), key.size()) && fsync(fd) == 0;
  close(fd);
  const bool linked = written && link(name.c_str(), path.c_str()) == 0;
  const int link_errno = errno;
  unlink(name.c_str());
  if (!written) throw DataError(name + ": cannot write the image cache key");
  if (!linked && link_errno != EEXIST)
    throw DataError(path + ": cannot create the image cache key: " + std::strerror(link_errno));
  return linked ? key : ReadKey(path);
}

struct CacheMac::State {
  EVP_PKEY* key = nullptr;
  EVP_MD_CTX* ctx = nullptr;
};

CacheMac::CacheMac(const std::string& key) : state_(new State) {
  state_->key = EVP_PKEY_new_raw_private_key(
      EVP_PKEY_HMAC, nullptr, reinterpret_cast<const unsigned char*>(key.data()), key.size());
  state_->ctx = EVP_MD_CTX_new();
  if (!state_->key || !state_->ctx ||
      EVP_DigestSignInit(state_->ctx, nullptr, EVP_sha256(), nullptr, state_->key) != 1) {
    EVP_MD_CTX_free(state_->ctx);
    EVP_PKEY_free(state_->key);
    delete state_;
    throw DataError("the image cache: HMAC-SHA256 is not available");
  }
}

CacheMac::~CacheMac() {
  EVP_MD_CTX_free(state_->ctx);
  EVP_PKEY_free(state_->key);
  delete state_;
}

void CacheMac::Update(const void* data, size_t n) {
  if (n > 0) EVP_DigestSignUpdate(state_->ctx, data, n);
}

std::string CacheMac::Final() {
  std::string mac(kCacheMacBytes, '\0');
  size_t len = mac.size();
  if (EVP_DigestSignFinal(state_->ctx, reinterpret_cast<unsigned char*>(mac.data()), &len) != 1 ||
      len != kCacheMacBytes)
    throw DataError("the image cache: HMAC-SHA256 failed");
  return mac;
}

}  // namespace mt
