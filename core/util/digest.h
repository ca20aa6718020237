#pragma once

#include <cstddef>
#include <cstdint>

namespace mt {

// A 64-bit digest of a float vector's bytes, for workers and the hub to
// confirm that their weight copies are identical without sending them.
uint64_t DigestFloats(const float* data, size_t n);

}  // namespace mt
