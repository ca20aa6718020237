// Little-endian binary encoding of a checkpoint's frame (magic, version,
// checksum around the proto body); its reading is in checkpoint.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace mt {

class ByteWriter {
 public:
  void U32(uint32_t v) { Raw(&v, 4); }
  void Raw(const void* p, size_t n) {
    if (n > 0) out_.append(static_cast<const char*>(p), n);
  }
  const std::string& bytes() const { return out_; }
  std::string& bytes() { return out_; }

 private:
  std::string out_;  // this code assumes a little-endian host, as are all mt targets
};

}  // namespace mt
