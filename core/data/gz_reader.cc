#include "core/data/gz_reader.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>

#include "core/data/dataset.h"

namespace mt {
namespace {

// See GzReader::size_hint(). Deflate expands at most about 1032:1.
size_t SizeHint(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return 0;
  size_t hint = 0;
  unsigned char magic[2] = {0, 0}, trailer[4] = {0, 0, 0, 0};
  if (std::fread(magic, 1, 2, f) == 2 && std::fseek(f, 0, SEEK_END) == 0) {
    const long size = std::ftell(f);
    hint = size > 0 ? static_cast<size_t>(size) : 0;
    if (magic[0] == 0x1f && magic[1] == 0x8b && size >= 18 && std::fseek(f, -4, SEEK_END) == 0 &&
        std::fread(trailer, 1, 4, f) == 4) {
      const size_t isize = trailer[0] | trailer[1] << 8 | trailer[2] << 16 |
                           static_cast<size_t>(trailer[3]) << 24;  // little-endian, mod 2^32
      hint = std::min(isize, hint * 1032);
    }
  }
  std::fclose(f);
  return hint;
}

}  // namespace

GzReader::GzReader(const std::string& path) : path_(path), size_hint_(SizeHint(path)) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw DataError(path + ": cannot open: " + std::strerror(errno ? errno : ENOENT));
  gzbuffer(f, 1 << 18);
  file_ = f;
}

GzReader::~GzReader() { gzclose(static_cast<gzFile>(file_)); }

size_t GzReader::Read(void* out, size_t n) {
  auto* dst = static_cast<uint8_t*>(out);
  size_t done = 0;
  while (done < n) {
    const unsigned want = static_cast<unsigned>(std::min<size_t>(n - done, INT_MAX / 2));
    const int got = gzread(static_cast<gzFile>(file_), dst + done, want);
    if (got < 0) {
      int code = 0;
      throw DataError(path_ +
                      ": corrupt compressed data: " + gzerror(static_cast<gzFile>(file_), &code));
    }
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  return done;
}

void GzReader::ReadExactly(void* out, size_t n, const char* what) {
  const size_t got = Read(out, n);
  if (got != n)
    throw DataError(path_ + ": truncated: expected " + std::to_string(n) + " bytes of " + what +
                    ", got " + std::to_string(got));
}

void GzReader::ReadGrowing(std::vector<uint8_t>* out, size_t n, const char* what) {
  constexpr size_t kChunk = size_t{16} << 20;
  out->clear();
  out->shrink_to_fit();
  out->reserve(std::min(n, size_hint_));
  while (out->size() < n) {
    const size_t at = out->size();
    const size_t want = std::min(kChunk, n - at);
    out->resize(at + want);
    const size_t got = Read(out->data() + at, want);
    if (got != want)
      throw DataError(path_ + ": truncated: expected " + std::to_string(n) + " bytes of " + what +
                      ", got " + std::to_string(at + got));
  }
}

bool GzReader::AtEnd() {
  uint8_t b;
  return Read(&b, 1) == 0;
}

}  // namespace mt
