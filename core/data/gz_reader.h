// Sequential reads from a file that may or may not be gzip (zlib passes plain
// files through unchanged), so readers can fill their final buffers directly
// instead of inflating into a temporary copy of a 47 MB file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

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
  // Reads exactly n bytes into *out (replacing it), growing it as data
  // arrives rather than allocating n up front: a header that claims 4 GB
  // in a small file costs what the file holds, then a "truncated" error.
  void ReadGrowing(std::vector<uint8_t>* out, size_t n, const char* what);
  bool AtEnd();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  void* file_;  // gzFile, kept opaque so users need not include zlib.h
};

}  // namespace mt
