#include "core/data/gz_reader.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "core/data/dataset.h"

namespace mt {

GzReader::GzReader(const std::string& path) : path_(path) {
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
