#include "core/util/digest.h"

#include <zlib.h>

namespace mt {

uint64_t DigestFloats(const float* data, size_t n) {
  // Two CRCs over the two halves, plus the length: cheap (zlib's CRC runs at
  // memory speed) and any single changed weight changes it.
  const auto* bytes = reinterpret_cast<const Bytef*>(data);
  const size_t total = n * sizeof(float), half = total / 2;
  const uint64_t a = crc32(0L, bytes, static_cast<uInt>(half));
  const uint64_t b = crc32(0L, bytes + half, static_cast<uInt>(total - half));
  return ((a << 32) | b) ^ (static_cast<uint64_t>(n) * 0x9E3779B97F4A7C15ull);
}

}  // namespace mt
