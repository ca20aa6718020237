// Sequential reads from a file that may or may not be gzip (zlib passes plain
// files through unchanged), so readers can fill their final buffers directly
// instead of inflating into a temporary copy of a 47 MB file.
#pragma once

#include <cstddef>
#include <string>

namespace mt {

class GzReader {
 public:
  explicit GzReader(const std::string& path);  // throws DataError
  ~GzReader();
  GzReader(const GzReader&) = delete;
  GzReader& operator=(const GzReader&) = delete;

  // Reads up to n bytes; returns how many were read (fewer only at the end).
  size_t Read(void* out, size_t n);
  // Reads exactly n bytes or throws DataError saying the file is truncated.
  void ReadExactly(void* out, size_t n, const char* what);
  bool AtEnd();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  void* file_;  // gzFile, kept opaque so users need not include zlib.h
};

}  // namespace mt
