#include "hub/aggregation/sketch_seed.h"

#include <openssl/rand.h>

#include <stdexcept>

namespace mt {

uint32_t SketchSeedOf(std::optional<uint32_t> configured) {
  if (configured) return *configured;
  uint32_t seed = 0;
  if (RAND_bytes(reinterpret_cast<unsigned char*>(&seed), sizeof seed) != 1)
    throw std::runtime_error("no randomness for the residual sketch's seed");
  return seed;
}

}  // namespace mt
