#include "core/data/cache_files.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>
#include <thread>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/data/dataset.h"

namespace mt {
namespace {

std::string Errno() { return std::strerror(errno); }

std::string RandomHex() {
  std::random_device random;  // the kernel's generator
  static const char kHex[] = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < 4; ++i) {
    const uint32_t v = random();
    for (int b = 0; b < 8; ++b) s += kHex[(v >> (4 * b)) & 15];
  }
  return s;
}

}  // namespace

void PrepareCacheDir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(dir).parent_path(), ec);
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    throw DataError(dir +
                    ": cannot create the image cache directory (set MT_CACHE_DIR): " + Errno());
  struct stat link {
  }, st{};
  if (lstat(dir.c_str(), &link) != 0 || stat(dir.c_str(), &st) != 0)
    throw DataError(dir + ": cannot use the image cache directory: " + Errno());
  const uid_t me = geteuid();
  if (S_ISLNK(link.st_mode) && link.st_uid != me && link.st_uid != 0)
    throw DataError(dir + ": the image cache directory is a link made by another user (uid " +
                    std::to_string(link.st_uid) + "); set MT_CACHE_DIR to a directory of yours");
  if (!S_ISDIR(st.st_mode))
    throw DataError(dir + ": not a directory, so no image cache (set MT_CACHE_DIR)");
  if (st.st_uid != me)
    throw DataError(dir + ": the image cache directory belongs to another user (uid " +
                    std::to_string(st.st_uid) + "); set MT_CACHE_DIR to a directory of yours");
  if ((st.st_mode & 077) != 0 && chmod(dir.c_str(), 0700) != 0)
    throw DataError(dir + ": cannot make the image cache directory private: " + Errno());
}

CacheWriter::CacheWriter(const std::string& final_path, const std::string& key)
    : final_(final_path), mac_(key) {
  for (int attempt = 0; fd_ < 0; ++attempt) {
    temp_ = final_path + ".tmp-" + RandomHex();
    fd_ = open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd_ < 0 && (errno != EEXIST || attempt == 8))
      throw DataError(temp_ + ": cannot create: " + Errno());
  }
}

CacheWriter::~CacheWriter() {
  if (fd_ >= 0) close(fd_);
  if (!committed_) unlink(temp_.c_str());
}

void CacheWriter::WriteRaw(const void* data, size_t n) {
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t wrote = write(fd_, p, n);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) throw DataError(temp_ + ": cannot write: " + Errno());
    p += wrote;
    n -= static_cast<size_t>(wrote);
  }
}

void CacheWriter::Write(const void* data, size_t n) {
  mac_.Update(data, n);
  WriteRaw(data, n);
}

void CacheWriter::Commit(const std::string& trailer) {
  const std::string mac = mac_.Final();
  WriteRaw(mac.data(), mac.size());
  WriteRaw(trailer.data(), trailer.size());
  const bool synced = fsync(fd_) == 0;
  close(fd_);
  fd_ = -1;
  // rename replaces a link planted at the final name; it never follows it.
  if (!synced || rename(temp_.c_str(), final_.c_str()) != 0)
    throw DataError(final_ + ": cannot write: " + Errno());
  committed_ = true;
}

CacheLock::CacheLock(const std::string& path, std::chrono::seconds stall) {
  fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd_ < 0) throw DataError(path + ": cannot create: " + Errno());
  const auto start = std::chrono::system_clock::now();
  while (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) {
      const std::string why = Errno();
      close(fd_);
      throw DataError(path + ": cannot lock: " + why);
    }
    struct stat st {};
    fstat(fd_, &st);
    const auto touched = std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(
            std::chrono::seconds(st.st_mtim.tv_sec) +
            std::chrono::nanoseconds(st.st_mtim.tv_nsec)));
    const auto now = std::chrono::system_clock::now();
    if (now - std::max(start, touched) > stall) {
      close(fd_);
      const auto waited = std::chrono::duration_cast<std::chrono::seconds>(now - start).count();
      throw DataError(path +
                      ": the image cache is locked by another process, which has shown no "
                      "progress for " +
                      std::to_string(stall.count()) + " s (waited " + std::to_string(waited) +
                      " s): a stuck mthub or mtworker, or something else holding the file open "
                      "(`fuser " +
                      path + "` names it); stop it, or set MT_CACHE_DIR elsewhere");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  Touch();
}

CacheLock::~CacheLock() { close(fd_); }

void CacheLock::Touch() { futimens(fd_, nullptr); }

}  // namespace mt
