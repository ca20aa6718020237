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
  // Reads exactly n bytes into *out (replacing it). Room for n is made up
  // front only as far as the file can hold it (size_hint()), and beyond
  // that as data arrives: a header that claims 4 GB in a small file costs
  // what the file holds, then a "truncated" error, while an honest file is
  // read into one allocation (growing in steps would leave the outgrown
  // buffers resident: the daemons keep freed memory for reuse).
  void ReadGrowing(std::vector<uint8_t>* out, size_t n, const char* what);
  // The most bytes the file plausibly holds: its size, or for gzip the
  // uncompressed size its trailer records, capped at what deflate can
  // expand the file to. Only a hint: reads never trust it.
  size_t size_hint() const { return size_hint_; }
  bool AtEnd();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  size_t size_hint_ = 0;
  void* file_;  // gzFile, kept opaque so users need not include zlib.h
};

}  // namespace mt
