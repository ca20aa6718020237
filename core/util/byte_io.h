// Little-endian, length-prefixed binary encoding for checkpoints and
// optimizer state. The reader checks every length against what is left, so
// a truncated or corrupt input gives an error, never a wild read.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace mt {

class ByteWriter {
 public:
  void U32(uint32_t v) { Raw(&v, 4); }
  void U64(uint64_t v) { Raw(&v, 8); }
  void I64(int64_t v) { Raw(&v, 8); }
  void F32(float v) { Raw(&v, 4); }
  void Str(const std::string& s) {
    U64(s.size());
    out_.append(s);
  }
  void Floats(const std::vector<float>& v) {
    U64(v.size());
    Raw(v.data(), v.size() * sizeof(float));
  }
  void Raw(const void* p, size_t n) {
    if (n > 0) out_.append(static_cast<const char*>(p), n);
  }
  const std::string& bytes() const { return out_; }
  std::string& bytes() { return out_; }

 private:
  std::string out_;  // this code assumes a little-endian host, as are all mt targets
};

class ByteReader {
 public:
  ByteReader(const char* data, size_t size, std::string what)
      : p_(data), end_(data + size), what_(std::move(what)) {}

  uint32_t U32() {
    uint32_t v;
    Raw(&v, 4);
    return v;
  }
  uint64_t U64() {
    uint64_t v;
    Raw(&v, 8);
    return v;
  }
  int64_t I64() {
    int64_t v;
    Raw(&v, 8);
    return v;
  }
  float F32() {
    float v;
    Raw(&v, 4);
    return v;
  }
  std::string Str() {
    const uint64_t n = Length(1);
    std::string s(p_, n);
    p_ += n;
    return s;
  }
  std::vector<float> Floats() {
    const uint64_t n = Length(sizeof(float));
    std::vector<float> v(n);
    Raw(v.data(), n * sizeof(float));
    return v;
  }
  void Raw(void* out, size_t n) {
    if (static_cast<size_t>(end_ - p_) < n) throw std::out_of_range(what_ + ": truncated");
    if (n == 0) return;  // out may be null (an empty vector's data())
    std::memcpy(out, p_, n);
    p_ += n;
  }
  size_t left() const { return static_cast<size_t>(end_ - p_); }

 private:
  uint64_t Length(size_t element) {
    const uint64_t n = U64();
    if (n > left() / element)
      throw std::out_of_range(what_ + ": truncated (length " + std::to_string(n) + ")");
    return n;
  }
  const char* p_;
  const char* end_;
  std::string what_;
};

}  // namespace mt
