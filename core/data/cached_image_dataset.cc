#include "core/data/cached_image_dataset.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/data/cache_key.h"
#include "core/util/constant_time.h"

namespace mt {

const char kImageCacheMagic[8] = {'M', 'T', 'I', 'M', 'G', 0, 0, 2};

namespace {

// Reads exactly n bytes at `offset`, or says why not.
bool ReadAt(int fd, void* out, size_t n, off_t offset) {
  auto* p = static_cast<char*>(out);
  while (n > 0) {
    const ssize_t got = pread(fd, p, n, offset);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got;
    n -= static_cast<size_t>(got);
    offset += got;
  }
  return true;
}

// Whether the MAC at `mac_at` is that of every byte before it under `key`;
// the whole file is read, in pieces.
bool MacVerifies(int fd, uint64_t mac_at, const std::string& key) {
  CacheMac mac(key);
  std::vector<char> piece(1 << 20);
  for (uint64_t at = 0; at < mac_at;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(piece.size(), mac_at - at));
    if (!ReadAt(fd, piece.data(), n, static_cast<off_t>(at))) return false;
    mac.Update(piece.data(), n);
    at += n;
  }
  std::string stored(kCacheMacBytes, '\0');
  return ReadAt(fd, stored.data(), stored.size(), static_cast<off_t>(mac_at)) &&
         ConstantTimeEquals(mac.Final(), stored);
}

}  // namespace

CachedImageDataset::CachedImageDataset(const std::string& path, const std::string& key)
    : path_(path) {
  fd_ = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd_ < 0) throw DataError(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  fstat(fd_, &st);
  const auto file_size = static_cast<uint64_t>(st.st_size);
  // MAGIC, pixels, header, its length (8 bytes), MAC (of all before it), MAGIC.
  constexpr uint64_t kTail = 8 + kCacheMacBytes + 8;
  char head[8], tail[kTail];
  const auto bad = [&](const std::string& why) {
    close(fd_);
    fd_ = -1;
    return DataError(path + ": not a whole image cache (" + why + ")");
  };
  if (!S_ISREG(st.st_mode) || file_size < 8 + kTail || !ReadAt(fd_, head, 8, 0) ||
      !ReadAt(fd_, tail, kTail, static_cast<off_t>(file_size - kTail)) ||
      std::memcmp(head, kImageCacheMagic, 8) != 0 ||
      std::memcmp(tail + kTail - 8, kImageCacheMagic, 8) != 0)
    throw bad("no magic at both ends");
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = header_len << 8 | static_cast<uint8_t>(tail[i]);
  if (header_len > file_size - 8 - kTail) throw bad("header length");
  if (!MacVerifies(fd_, file_size - 8 - kCacheMacBytes, key))
    throw bad("its MAC does not verify: written on another machine, or altered");
  std::string bytes(header_len, '\0');
  proto::ImageCache header;
  if (!ReadAt(fd_, bytes.data(), header_len, static_cast<off_t>(file_size - kTail - header_len)) ||
      !header.ParseFromString(bytes))
    throw bad("header");
  // Pixel scaling covers at most 3 channels; a side past 2^15 is no picture
  // a model takes, and keeps the product below any overflow.
  if (header.channels() < 1 || header.channels() > 3 || header.height() < 1 || header.width() < 1 ||
      header.height() > (1 << 15) || header.width() > (1 << 15))
    throw bad("shape");
  sample_ = Shape{header.channels(), header.height(), header.width()};
  per_sample_ = sample_.count();
  const uint64_t pixels = file_size - 8 - kTail - header_len;
  if (per_sample_ == 0 || pixels != per_sample_ * static_cast<uint64_t>(header.labels_size()))
    throw bad("pixel bytes");
  classes_.assign(header.classes().begin(), header.classes().end());
  labels_.reserve(static_cast<size_t>(header.labels_size()));
  for (uint32_t label : header.labels()) {
    if (label >= classes_.size()) throw bad("label");
    labels_.push_back(static_cast<uint16_t>(label));
  }
  fingerprint_ = header.fingerprint();
  skipped_ = header.skipped();
  skipped_examples_.assign(header.skipped_examples().begin(), header.skipped_examples().end());
}

CachedImageDataset::~CachedImageDataset() {
  if (fd_ >= 0) close(fd_);
}

int CachedImageDataset::Get(size_t index, float* image) const {
  // The bytes are read into the last quarter of the floats they become and
  // widened front to back: float i is written over bytes that byte i and
  // the ones after it no longer occupy, so no buffer is needed.
  uint8_t* bytes = reinterpret_cast<uint8_t*>(image) + 3 * per_sample_;
  if (!ReadAt(fd_, bytes, per_sample_, static_cast<off_t>(8 + index * per_sample_)))
    throw DataError(path_ + ": cannot read sample " + std::to_string(index) +
                    " (the cache changed while in use?)");
  // Front to back across the channels too, as the comment above needs.
  const size_t plane = per_sample_ / static_cast<size_t>(sample_[0]);
  for (int c = 0; c < sample_[0]; ++c) {
    const float scale = scaling_.scale[c], offset = scaling_.offset[c];
    for (size_t i = c * plane; i < (c + 1) * plane; ++i) image[i] = bytes[i] * scale + offset;
  }
  return labels_[index];
}

}  // namespace mt
